package io.windowlimiter.app;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.cloud.gateway.support.ServerWebExchangeUtils;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A small fake OpenAI chat completions endpoint behind the {@code demo-llm} route, so one {@code curl} shows
 * a token budget at work without an API key: it answers JSON, or an SSE stream of five chunks 200 ms apart
 * when the request says {@code "stream":true}, and reports as usage a quarter of the request body's bytes as
 * prompt tokens and 40 output tokens. Like {@link DemoBackend}, it answers only requests the gateway
 * forwarded.
 */
@Configuration(proxyBeanMethods = false)
public class DemoLlmBackend {

	static final String PATH = "/demo-llm-backend";

	private static final int OUTPUT_TOKENS = 40;

	@Bean
	public RouterFunction<ServerResponse> demoLlmBackendRoutes() {
		return RouterFunctions.route(RequestPredicates.POST(PATH + "/v1/chat/completions")
			.and(request -> request.attribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR).isPresent()),
				DemoLlmBackend::chat);
	}

	private static Mono<ServerResponse> chat(ServerRequest request) {
		return request.bodyToMono(String.class).defaultIfEmpty("").flatMap(body -> {
			long prompt = Math.max(1, body.length() / 4);
			String usage = "{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + OUTPUT_TOKENS
					+ ",\"total_tokens\":" + (prompt + OUTPUT_TOKENS) + "}";
			if (!body.replace(" ", "").contains("\"stream\":true")) {
				return ServerResponse.ok()
					.contentType(MediaType.APPLICATION_JSON)
					.bodyValue("{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion\",\"model\":\"demo\",\"choices\":"
							+ "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"Hello from the demo LLM\"},"
							+ "\"finish_reason\":\"stop\"}],\"usage\":" + usage + "}");
			}
			boolean includeUsage = body.replace(" ", "").contains("\"include_usage\":true");
			List<String> events = new ArrayList<>();
			for (String word : List.of("Hello", " from", " the", " demo", " LLM")) {
				events.add("{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\",\"model\":\"demo\",\"choices\":"
						+ "[{\"index\":0,\"delta\":{\"content\":\"" + word + "\"},\"finish_reason\":null}]}");
			}
			if (includeUsage) {
				events.add("{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion.chunk\",\"model\":\"demo\","
						+ "\"choices\":[],\"usage\":" + usage + "}");
			}
			events.add("[DONE]");
			// each String is written as one event, "data:<event>" and a blank line
			Flux<String> stream = Flux.fromIterable(events).delayElements(Duration.ofMillis(200));
			return ServerResponse.ok().contentType(MediaType.TEXT_EVENT_STREAM).body(stream, String.class);
		});
	}

}
