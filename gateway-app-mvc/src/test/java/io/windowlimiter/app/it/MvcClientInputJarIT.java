package io.windowlimiter.app.it;

import java.util.ArrayList;
import java.util.List;

import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * What a client sends as its address, and beside its key and body, through gateway-app-mvc's packaged jar started
 * as on a Kubernetes pod ({@link KubernetesClientIpCases#KUBERNETES}), as {@code ClientInputJarIT} on WebFlux. One
 * jar serves both cases (a jar start costs 8-10 s of the suite); their routes and clients are their own:
 * <ul>
 * <li>the client's IP on a Kubernetes pod ({@link KubernetesClientIpCases}), where Spring Boot adds Tomcat's
 * RemoteIpValve: forged forwarded headers do not choose the key;</li>
 * <li>issue 44, attack round 2, findings 3 to 5 ({@link InputRefusalsCase}): a compressed LLM body, a hash sent as
 * the key, and different keys in the credential headers.</li>
 * </ul>
 * The credential-key case runs on a jar of its own, without a secret ({@code MvcCredentialKeysJarIT}).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MvcClientInputJarIT {

	private RedisProcess redis;

	private FakeLlmServer llm;

	private JdkDownstream downstream;

	private InputRefusalsCase input;

	private GatewayJar gateway;

	@BeforeAll
	void start() {
		this.redis = RedisProcess.launch();
		this.llm = FakeLlmServer.start();
		this.downstream = JdkDownstream.start();
		this.input = new InputRefusalsCase(this.llm);
		MvcRouteFile routes = new MvcRouteFile(this.downstream.uri());
		routes.route(InputRefusalsCase.LLM, this.llm.baseUrl(), "apiKeyResolver", InputRefusalsCase.llmArgs());
		routes.route(InputRefusalsCase.LISTED, this.downstream.uri(), "apiKeyResolver", this.input.listedArgs());
		routes.route(KubernetesClientIpCases.ROUTE, this.downstream.uri(), "clientIpKeyResolver",
				RouteFile.limit("sliding-log", 5, "10s"));
		List<String> args = new ArrayList<>(this.input.jarArgs());
		args.add(KubernetesClientIpCases.TRUSTED_PROXIES);
		this.gateway = GatewayJar.start("mvc-client-input", this.redis.port(), routes.write(),
				KubernetesClientIpCases.KUBERNETES, args.toArray(String[]::new));
	}

	@AfterAll
	void stop() throws Exception {
		Resources.close(this.gateway, this.downstream, this.llm, this.redis);
	}

	@Test
	void whatAClientWritesBesideItsBodyAndKeyDoesNotTakeItOutOfItsBudget() throws Exception {
		this.input.run(this.gateway);
	}

	@Nested
	class OnKubernetes extends KubernetesClientIpCases {

		OnKubernetes() {
			super(MvcClientInputJarIT.this.gateway);
		}

	}

}
