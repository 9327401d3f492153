package io.windowlimiter.app.mvc;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.windowlimiter.demo.DemoChatCompletion;
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
 * request body's bytes as prompt tokens and 40 output tokens ({@link DemoChatCompletion}, shared with gateway-app;
 * this class only writes it). Like {@link DemoBackend}, it answers only requests the gateway forwarded. The stream is written on the request's thread (a forward is one blocking dispatch).
 */
@Configuration(proxyBeanMethods = false)
public class DemoLlmBackend {

	static final String PATH = "/demo-llm-backend";

	@Bean
	public RouterFunction<ServerResponse> demoLlmBackendRoutes() {
		return RouterFunctions.route(RequestPredicates.POST(PATH + "/v1/chat/completions")
			.and(request -> request.attribute(MvcUtils.GATEWAY_ROUTE_ID_ATTR).isPresent()), DemoLlmBackend::chat);
	}

	private static ServerResponse chat(ServerRequest request) throws Exception {
		String body = new String(request.servletRequest().getInputStream().readAllBytes(), StandardCharsets.UTF_8);
		DemoChatCompletion answer = DemoChatCompletion.answering(body);
		if (!answer.stream()) {
			return ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).body(answer.json());
		}
		List<String> events = answer.events();
		return ServerResponse.ok().contentType(MediaType.TEXT_EVENT_STREAM).build((servletRequest, response) -> {
			ServletOutputStream out = response.getOutputStream();
			for (int i = 0; i < events.size(); i++) {
				if (i > 0) {
					Thread.sleep(DemoChatCompletion.EVENT_INTERVAL.toMillis());
				}
				out.write(("data:" + events.get(i) + "\n\n").getBytes(StandardCharsets.UTF_8));
				out.flush();
			}
			return null;
		});
	}

}
