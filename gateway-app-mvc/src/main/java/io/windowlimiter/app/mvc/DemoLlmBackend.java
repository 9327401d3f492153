package io.windowlimiter.app.mvc;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import jakarta.servlet.ServletOutputStream;

import org.springframework.cloud.gateway.server.mvc.common.MvcUtils;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.function.RequestPredicates;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * A small fake OpenAI chat completions endpoint behind the {@code demo-llm} route, as gateway-app has one, so one
 * {@code curl} shows a token budget at work on Server MVC without an API key: it answers JSON, or an SSE stream of
 * five chunks 200 ms apart when the request says {@code "stream":true}, and reports as usage a quarter of the
 * request body's bytes as prompt tokens and 40 output tokens. Like {@link DemoBackend}, it answers only requests
 * the gateway forwarded. The stream is written on the request's thread (a forward is one blocking dispatch).
 */
@Configuration(proxyBeanMethods = false)
public class DemoLlmBackend {

	static final String PATH = "/demo-llm-backend";

	private static final int OUTPUT_TOKENS = 40;

	@Bean
	public RouterFunction<ServerResponse> demoLlmBackendRoutes() {
		return RouterFunctions.route(RequestPredicates.POST(PATH + "/v1/chat/completions")
			.and(request -> request.attribute(MvcUtils.GATEWAY_ROUTE_ID_ATTR).isPresent()), DemoLlmBackend::chat);
	}

	private static ServerResponse chat(ServerRequest request) throws Exception {
		String body = new String(request.servletRequest().getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		long prompt = Math.max(1, body.length() / 4);
		String usage = "{\"prompt_tokens\":" + prompt + ",\"completion_tokens\":" + OUTPUT_TOKENS + ",\"total_tokens\":"
				+ (prompt + OUTPUT_TOKENS) + "}";
		if (!body.replace(" ", "").contains("\"stream\":true")) {
			return ServerResponse.ok()
				.contentType(MediaType.APPLICATION_JSON)
				.body("{\"id\":\"chatcmpl-demo\",\"object\":\"chat.completion\",\"model\":\"demo\",\"choices\":"
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
		return ServerResponse.ok().contentType(MediaType.TEXT_EVENT_STREAM).build((servletRequest, response) -> {
			ServletOutputStream out = response.getOutputStream();
			for (int i = 0; i < events.size(); i++) {
				if (i > 0) {
					Thread.sleep(200);
				}
				out.write(("data:" + events.get(i) + "\n\n").getBytes(StandardCharsets.UTF_8));
				out.flush();
			}
			return null;
		});
	}

}
