package io.windowlimiter.app;

import io.windowlimiter.demo.DemoChatCompletion;
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
 * prompt tokens and 40 output tokens ({@link DemoChatCompletion}, shared with gateway-app-mvc; this class
 * only writes it). Like {@link DemoBackend}, it answers only requests the gateway forwarded.
 */
@Configuration(proxyBeanMethods = false)
public class DemoLlmBackend {

	static final String PATH = "/demo-llm-backend";

	@Bean
	public RouterFunction<ServerResponse> demoLlmBackendRoutes() {
		return RouterFunctions.route(RequestPredicates.POST(PATH + "/v1/chat/completions")
			.and(request -> request.attribute(ServerWebExchangeUtils.GATEWAY_ROUTE_ATTR).isPresent()),
				DemoLlmBackend::chat);
	}

	private static Mono<ServerResponse> chat(ServerRequest request) {
		return request.bodyToMono(String.class).defaultIfEmpty("").flatMap(body -> {
			DemoChatCompletion answer = DemoChatCompletion.answering(body);
			if (!answer.stream()) {
				return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(answer.json());
			}
			// each String is written as one event, "data:<event>" and a blank line
			Flux<String> stream = Flux.fromIterable(answer.events()).delayElements(DemoChatCompletion.EVENT_INTERVAL);
			return ServerResponse.ok().contentType(MediaType.TEXT_EVENT_STREAM).body(stream, String.class);
		});
	}

}
