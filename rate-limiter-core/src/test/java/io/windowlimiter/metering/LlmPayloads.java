package io.windowlimiter.metering;

import java.nio.charset.StandardCharsets;

/**
 * Response bodies as OpenAI's and Anthropic's API references show them, written by hand (ids shortened),
 * with non-ASCII text so that slices split characters.
 */
final class LlmPayloads {

	private LlmPayloads() {
	}

	static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

	/** POST /v1/chat/completions, "stream": false. Usage 19 + 10 = 29. */
	static final String CHAT_JSON = """
			{
			  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
			  "object": "chat.completion",
			  "created": 1741569952,
			  "model": "gpt-4.1-2025-04-14",
			  "choices": [
			    {
			      "index": 0,
			      "message": {
			        "role": "assistant",
			        "content": "Héllo! How can I help you today? 世界 🙂 {\\"usage\\": 999}",
			        "refusal": null,
			        "annotations": []
			      },
			      "logprobs": null,
			      "finish_reason": "stop"
			    }
			  ],
			  "usage": {
			    "prompt_tokens": 19,
			    "completion_tokens": 10,
			    "total_tokens": 29,
			    "prompt_tokens_details": {
			      "cached_tokens": 0,
			      "audio_tokens": 0
			    },
			    "completion_tokens_details": {
			      "reasoning_tokens": 0,
			      "audio_tokens": 0,
			      "accepted_prediction_tokens": 0,
			      "rejected_prediction_tokens": 0
			    }
			  },
			  "service_tier": "default"
			}
			""";

	/** A chat completions chunk carrying one piece of text. */
	static String chatChunk(String content, boolean usageNull) {
		return "data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\",\"created\":1694268190,"
				+ "\"model\":\"gpt-4o-mini\",\"system_fingerprint\":\"fp_44709d6fcb\",\"choices\":[{\"index\":0,"
				+ "\"delta\":{\"content\":\"" + content + "\"},\"logprobs\":null,\"finish_reason\":null}]"
				+ (usageNull ? ",\"usage\":null" : "") + "}\n\n";
	}

	static final String CHAT_USAGE_CHUNK = "data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\","
			+ "\"created\":1694268190,\"model\":\"gpt-4o-mini\",\"system_fingerprint\":\"fp_44709d6fcb\","
			+ "\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":12,\"total_tokens\":21,"
			+ "\"prompt_tokens_details\":{\"cached_tokens\":0,\"audio_tokens\":0},\"completion_tokens_details\":"
			+ "{\"reasoning_tokens\":0,\"audio_tokens\":0,\"accepted_prediction_tokens\":0,"
			+ "\"rejected_prediction_tokens\":0}}}\n\n";

	/** Chat completions stream before its usage chunk: role, text, finish. */
	static String chatSseBody(boolean usageNull) {
		String nul = usageNull ? ",\"usage\":null" : "";
		return "data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\",\"created\":1694268190,"
				+ "\"model\":\"gpt-4o-mini\",\"system_fingerprint\":\"fp_44709d6fcb\",\"choices\":[{\"index\":0,"
				+ "\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]" + nul
				+ "}\n\n" + chatChunk("Héllo", usageNull) + chatChunk(" 世界", usageNull)
				+ chatChunk(" 🙂\\n\\\"ok\\\"", usageNull)
				+ "data: {\"id\":\"chatcmpl-123\",\"object\":\"chat.completion.chunk\",\"created\":1694268190,"
				+ "\"model\":\"gpt-4o-mini\",\"system_fingerprint\":\"fp_44709d6fcb\",\"choices\":[{\"index\":0,"
				+ "\"delta\":{},\"logprobs\":null,\"finish_reason\":\"stop\"}]" + nul + "}\n\n";
	}

	/** With stream_options.include_usage: usage 9 + 12 = 21, then [DONE]. */
	static final String CHAT_SSE = chatSseBody(true) + CHAT_USAGE_CHUNK + "data: [DONE]\n\n";

	/** Without include_usage: no usage at all. */
	static final String CHAT_SSE_WITHOUT_USAGE = chatSseBody(false) + "data: [DONE]\n\n";

	/** POST /v1/responses, JSON. Usage 36 + 87 = 123. */
	static final String RESPONSES_JSON = """
			{
			  "id": "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c45c1d41",
			  "object": "response",
			  "created_at": 1741476777,
			  "status": "completed",
			  "error": null,
			  "incomplete_details": null,
			  "instructions": null,
			  "max_output_tokens": null,
			  "model": "gpt-4o-2024-08-06",
			  "output": [
			    {
			      "type": "message",
			      "id": "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c45c1d41",
			      "status": "completed",
			      "role": "assistant",
			      "content": [
			        {
			          "type": "output_text",
			          "text": "The image depicts a scenic landscape, 景色 🌄",
			          "annotations": []
			        }
			      ]
			    }
			  ],
			  "parallel_tool_calls": true,
			  "previous_response_id": null,
			  "reasoning": { "effort": null, "summary": null },
			  "store": true,
			  "temperature": 1.0,
			  "text": { "format": { "type": "text" } },
			  "tool_choice": "auto",
			  "tools": [],
			  "top_p": 1.0,
			  "truncation": "disabled",
			  "usage": {
			    "input_tokens": 328,
			    "input_tokens_details": { "cached_tokens": 0 },
			    "output_tokens": 52,
			    "output_tokens_details": { "reasoning_tokens": 0 },
			    "total_tokens": 380
			  },
			  "user": null,
			  "metadata": {}
			}
			""";

	private static String responseObject(String status, String output, String usage) {
		return "{\"id\":\"resp_67c9fdcecf488190bdd9a0409de3a1ec07b8b0ad4e5eb654\",\"object\":\"response\","
				+ "\"created_at\":1741290958,\"status\":\"" + status + "\",\"error\":null,\"incomplete_details\":null,"
				+ "\"instructions\":\"You are a helpful assistant.\",\"max_output_tokens\":null,"
				+ "\"model\":\"gpt-4.1-2025-04-14\",\"output\":" + output + ",\"parallel_tool_calls\":true,"
				+ "\"previous_response_id\":null,\"reasoning\":{\"effort\":null,\"summary\":null},\"store\":true,"
				+ "\"temperature\":1.0,\"text\":{\"format\":{\"type\":\"text\"}},\"tool_choice\":\"auto\",\"tools\":[],"
				+ "\"top_p\":1.0,\"truncation\":\"disabled\",\"usage\":" + usage + ",\"user\":null,\"metadata\":{}}";
	}

	private static final String RESPONSES_OUTPUT = "[{\"id\":\"msg_67c9fdcf37fc8190ba82116e33fb28c507b8b0ad4e5eb654\","
			+ "\"type\":\"message\",\"status\":\"completed\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\","
			+ "\"text\":\"Hi there! 你好\",\"annotations\":[]}]}]";

	static String responsesEvent(String type, String json) {
		return "event: " + type + "\ndata: " + json + "\n\n";
	}

	/** The Responses API's stream: usage 37 + 11 = 48, in response.completed only. */
	static final String RESPONSES_SSE = responsesEvent("response.created",
			"{\"type\":\"response.created\",\"sequence_number\":0,\"response\":"
					+ responseObject("in_progress", "[]", "null") + "}")
			+ responsesEvent("response.in_progress", "{\"type\":\"response.in_progress\",\"sequence_number\":1,"
					+ "\"response\":" + responseObject("in_progress", "[]", "null") + "}")
			+ responsesEvent("response.output_item.added", "{\"type\":\"response.output_item.added\","
					+ "\"sequence_number\":2,\"output_index\":0,\"item\":{\"id\":\"msg_67c9\",\"type\":\"message\","
					+ "\"status\":\"in_progress\",\"role\":\"assistant\",\"content\":[]}}")
			+ responsesEvent("response.content_part.added", "{\"type\":\"response.content_part.added\","
					+ "\"sequence_number\":3,\"item_id\":\"msg_67c9\",\"output_index\":0,\"content_index\":0,"
					+ "\"part\":{\"type\":\"output_text\",\"text\":\"\",\"annotations\":[]}}")
			+ responsesEvent("response.output_text.delta", "{\"type\":\"response.output_text.delta\","
					+ "\"sequence_number\":4,\"item_id\":\"msg_67c9\",\"output_index\":0,\"content_index\":0,"
					+ "\"delta\":\"Hi there!\",\"logprobs\":[]}")
			+ responsesEvent("response.output_text.delta", "{\"type\":\"response.output_text.delta\","
					+ "\"sequence_number\":5,\"item_id\":\"msg_67c9\",\"output_index\":0,\"content_index\":0,"
					+ "\"delta\":\" 你好\",\"logprobs\":[]}")
			+ responsesEvent("response.output_text.done", "{\"type\":\"response.output_text.done\","
					+ "\"sequence_number\":6,\"item_id\":\"msg_67c9\",\"output_index\":0,\"content_index\":0,"
					+ "\"text\":\"Hi there! 你好\",\"logprobs\":[]}")
			+ responsesEvent("response.content_part.done", "{\"type\":\"response.content_part.done\","
					+ "\"sequence_number\":7,\"item_id\":\"msg_67c9\",\"output_index\":0,\"content_index\":0,"
					+ "\"part\":{\"type\":\"output_text\",\"text\":\"Hi there! 你好\",\"annotations\":[]}}")
			+ responsesEvent("response.output_item.done", "{\"type\":\"response.output_item.done\","
					+ "\"sequence_number\":8,\"output_index\":0,\"item\":" + RESPONSES_OUTPUT.substring(1,
							RESPONSES_OUTPUT.length() - 1) + "}")
			+ responsesEvent("response.completed", "{\"type\":\"response.completed\",\"sequence_number\":9,"
					+ "\"response\":" + responseObject("completed", RESPONSES_OUTPUT,
							"{\"input_tokens\":37,\"input_tokens_details\":{\"cached_tokens\":0},\"output_tokens\":11,"
									+ "\"output_tokens_details\":{\"reasoning_tokens\":0},\"total_tokens\":48}")
					+ "}");

	/** POST /v1/messages, JSON, with prompt caching: 2095 + 1500 + 3000 + 503 = 7098. */
	static final String ANTHROPIC_JSON = """
			{
			  "id": "msg_013Zva2CMHLNnXjNJJKqJ2EF",
			  "type": "message",
			  "role": "assistant",
			  "model": "claude-sonnet-4-5-20250929",
			  "content": [
			    {
			      "type": "text",
			      "text": "Hi! My name is Claude. Ünïcödé 日本語 🎉"
			    }
			  ],
			  "stop_reason": "end_turn",
			  "stop_sequence": null,
			  "usage": {
			    "input_tokens": 2095,
			    "cache_creation_input_tokens": 1500,
			    "cache_read_input_tokens": 3000,
			    "cache_creation": { "ephemeral_5m_input_tokens": 1500, "ephemeral_1h_input_tokens": 0 },
			    "output_tokens": 503,
			    "service_tier": "standard"
			  }
			}
			""";

	static String anthropicEvent(String type, String json) {
		return "event: " + type + "\ndata: " + json + "\n\n";
	}

	static final String ANTHROPIC_MESSAGE_START = anthropicEvent("message_start",
			"{\"type\":\"message_start\",\"message\":{\"id\":\"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY\","
					+ "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5-20250929\","
					+ "\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,"
					+ "\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":100,\"output_tokens\":1}}}");

	static String anthropicTextDelta(String text) {
		return anthropicEvent("content_block_delta",
				"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + text
						+ "\"}}");
	}

	/** Anthropic's stream up to its last text: input known (25 + 100 cached), output not yet. */
	static final String ANTHROPIC_SSE_HEAD = ANTHROPIC_MESSAGE_START
			+ anthropicEvent("content_block_start",
					"{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}")
			+ anthropicEvent("ping", "{\"type\": \"ping\"}") + anthropicTextDelta("Hello")
			+ anthropicTextDelta("! 日本語 ✨");

	/** Anthropic's stream: 25 + 100 cache read + 15 output = 140. */
	static final String ANTHROPIC_SSE = ANTHROPIC_SSE_HEAD
			+ anthropicEvent("content_block_stop", "{\"type\":\"content_block_stop\",\"index\":0}")
			+ anthropicEvent("message_delta", "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\","
					+ "\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}")
			+ anthropicEvent("message_stop", "{\"type\":\"message_stop\"}");

	static final String OPENAI_ERROR_JSON = """
			{
			  "error": {
			    "message": "Rate limit reached for gpt-4o in organization org-xyz on tokens per min (TPM).",
			    "type": "tokens",
			    "param": null,
			    "code": "rate_limit_exceeded"
			  }
			}
			""";

}
