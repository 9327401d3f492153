package io.windowlimiter.demo;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The demo LLM's payloads, byte for byte as both demo gateways answered them when each built its own: a
 * client of the demo route sees the same answer on WebFlux and Server MVC.
 */
class DemoChatCompletionUnitTests {

	private static final String CHUNK = "{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\",\"model\":\"demo\","
			+ "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"},\"finish_reason\":null}]}";

	private static final String FINISH = "{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\","
			+ "\"model\":\"demo\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}";

	@Test
	void aJsonAnswerReportsAQuarterOfTheBodyAndFortyOutputTokens() {
		// 32 characters: 8 prompt tokens
		DemoChatCompletion answer = DemoChatCompletion.answering("{\"messages\":[],\"max_tokens\":500}");
		assertThat(answer.stream()).isFalse();
		assertThat(answer.json()).isEqualTo("{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion\",\"model\":\"demo\","
				+ "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello from the demo LLM\"},"
				+ "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":8,\"completion_tokens\":40,\"total_tokens\":48}}");
		assertThat(DemoChatCompletion.answering("").json()).as("no body: one prompt token")
			.contains("\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":40,\"total_tokens\":41}");
	}

	@Test
	void aStreamIsFiveChunksAndTheFinishThenDoneAndTheUsageChunkOnlyWhenAsked() {
		DemoChatCompletion stream = DemoChatCompletion.answering("{\"stream\": true,\"messages\":[],\"max_tokens\":100}");
		assertThat(stream.stream()).as("spaces ignored").isTrue();
		assertThat(stream.events()).containsExactly(CHUNK.formatted("Hello"), CHUNK.formatted(" from"),
				CHUNK.formatted(" the"), CHUNK.formatted(" demo"), CHUNK.formatted(" LLM"), FINISH, "[DONE]");
		String asking = "{\"stream\":true,\"stream_options\":{\"include_usage\":true},\"messages\":[]}";
		// after the finish, as OpenAI sends it: the gateway's stripping relies on that order
		assertThat(DemoChatCompletion.answering(asking).events()).hasSize(8)
			.element(6)
			.isEqualTo("{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\",\"model\":\"demo\",\"choices\":[],"
					+ "\"usage\":{\"prompt_tokens\":" + asking.length() / 4 + ",\"completion_tokens\":40,\"total_tokens\":"
					+ (asking.length() / 4 + 40) + "}}");
	}

}
