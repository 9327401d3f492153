package io.windowlimiter.app.it;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.windowlimiter.gateway.test.FakeLlmServer;
import io.windowlimiter.gateway.test.RedisProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a client sends as its key and address, and beside its key and body, through gateway-app's packaged jar
 * started as on a Kubernetes pod ({@link KubernetesClientIpCases#KUBERNETES}) with a
 * {@code window-rate-limiter.client-key-secret}, as a deployment sets it. One jar serves the three cases (a jar start
 * costs 8-10 s of the suite); their routes, clients and settings are their own:
 * <ul>
 * <li>the client's IP on a Kubernetes pod ({@link KubernetesClientIpCases}): forged forwarded headers do not choose
 * the key;</li>
 * <li>issue 44 item 6 ({@link CredentialCase}): clients' API keys are hashed with the secret ({@code hmac:})
 * before anything keeps or shows them; the apiKeyResolver route is a {@code WindowRateLimit} filter (as LLM
 * routes are), the Authorization one the gateway's {@code RequestRateLimiter};</li>
 * <li>issue 44, attack round 2, findings 3 to 5 ({@link InputRefusalsCase}): a compressed LLM body, a hash sent
 * as the key, and different keys in the credential headers.</li>
 * </ul>
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClientInputJarIT {

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
		RouteFile routes = new RouteFile(this.downstream.uri());
		routes.windowRateLimit("llm-keys", List.of(byApiKey(CredentialCase.limit())));
		routes.route("bearer", "headerKeyResolver", CredentialCase.limit());
		routes.windowRateLimit(InputRefusalsCase.LLM, this.llm.baseUrl(), List.of(byApiKey(InputRefusalsCase.llmArgs())));
		routes.windowRateLimit(InputRefusalsCase.LISTED, List.of(byApiKey(this.input.listedArgs())));
		routes.route(KubernetesClientIpCases.ROUTE, "clientIpKeyResolver", RouteFile.limit("sliding-log", 5, "10s"));
		// the same secret in both; the endpoints both expose
		List<String> args = new ArrayList<>(CredentialCase.ARGS);
		this.input.jarArgs()
			.stream()
			.filter((arg) -> !arg.startsWith("--management.endpoints.web.exposure.include="))
			.forEach(args::add);
		args.add(KubernetesClientIpCases.TRUSTED_PROXIES);
		this.gateway = GatewayJar.start("client-input", this.redis.port(), routes.write(),
				KubernetesClientIpCases.KUBERNETES, args.toArray(String[]::new));
	}

	@AfterAll
	void stop() throws Exception {
		Resources.close(this.gateway, this.downstream, this.llm, this.redis);
	}

	@Test
	void noApiKeyLeavesTheGatewayInClear() throws Exception {
		new CredentialCase(this.gateway, this.redis.port(), "llm-keys", "bearer").run("hmac:");
		assertThat(Files.readString(this.gateway.log())).as("no warning with a secret")
			.doesNotContain("client-key-secret is not set");
	}

	@Test
	void whatAClientWritesBesideItsBodyAndKeyDoesNotTakeItOutOfItsBudget() throws Exception {
		this.input.run(this.gateway);
	}

	@Nested
	class OnKubernetes extends KubernetesClientIpCases {

		OnKubernetes() {
			super(ClientInputJarIT.this.gateway);
		}

	}

	private static Map<String, Object> byApiKey(Map<String, Object> args) {
		return RouteFile.with(args, "key-resolver", "#{@apiKeyResolver}");
	}

}
