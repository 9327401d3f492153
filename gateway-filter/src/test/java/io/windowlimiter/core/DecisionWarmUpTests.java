package io.windowlimiter.core;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;

import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.gateway.test.RedisProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import io.windowlimiter.gateway.GatewayTestApplication;

/**
 * What the warm-up runs, and with Redis not where the configuration says, start-up says which address it tried and
 * what happens meanwhile.
 */
@ExtendWith(OutputCaptureExtension.class)
class DecisionWarmUpTests {

	@Test
	void aWrongRedisPortIsNamedInTheWarningWithWhatRoutesDoMeanwhile(CapturedOutput output) throws Exception {
		int closed;
		try (ServerSocket socket = new ServerSocket(0)) {
			closed = socket.getLocalPort();
		}
		try (ConfigurableApplicationContext context = new SpringApplicationBuilder(GatewayTestApplication.class)
			.properties("server.port=0", "spring.data.redis.host=127.0.0.1", "spring.data.redis.port=" + closed)
			.run()) {
			assertThat(context.isActive()).isTrue();
		}
		assertThat(output.getOut()).contains("Rate-limit decisions not warmed up: Redis at 127.0.0.1:" + closed
				+ " did not answer")
			.contains("fail-mode");
	}

	/**
	 * The warm-up settles and releases as well as it decides, so that a fresh instance's first requests that
	 * settle do not pay for the settle path's first run: its 100 settles leave their ids in the client's markers.
	 */
	@Test
	void theWarmUpSettlesAsItDecides() {
		onRedisOfItsOwn(factory -> {
			ReactiveStringRedisTemplate template = new ReactiveStringRedisTemplate(factory);
			new DecisionWarmUp(new LimitScript(template), Duration.ofSeconds(10)).start();
			List<String> keys = template.scan().collectList().block(Duration.ofSeconds(5));
			List<Long> settled = keys.stream()
				.filter(key -> "hash".equals(template.type(key).block(Duration.ofSeconds(5)).code()))
				.map(key -> template.opsForHash().size(key).block(Duration.ofSeconds(5)))
				.toList();
			assertThat(settled).as("the warm-up client's settle markers, among its keys " + keys).containsExactly(100L);
		});
	}

	/**
	 * The warm-up's scripts all succeed: an operator alerting on Redis's error replies ({@code INFO errorstats}) sees
	 * nothing from a gateway starting (it released its slots through every key of every algorithm: a WRONGTYPE reply
	 * from each string key, 100 per start). Counted from after the connection opened: Lettuce's handshake sends
	 * CLIENT SETINFO, which Redis before 7.2 answers with an error of its own.
	 */
	@Test
	void theWarmUpLeavesNoErrorReplyInRedis() {
		onRedisOfItsOwn(factory -> {
			LimitScript script = new LimitScript(new ReactiveStringRedisTemplate(factory));
			script.load().block(Duration.ofSeconds(10));
			String before = factory.getConnection().serverCommands().info("stats").getProperty("total_error_replies");
			new DecisionWarmUp(script, Duration.ofSeconds(10)).start();
			assertThat(factory.getConnection().serverCommands().info("stats").getProperty("total_error_replies"))
				.as("error replies Redis sent: %s", factory.getConnection().serverCommands().info("errorstats"))
				.isEqualTo(before);
		});
	}

	/** Runs {@code test} with a started connection factory to a redis-server of its own, closed after. */
	private static void onRedisOfItsOwn(java.util.function.Consumer<LettuceConnectionFactory> test) {
		try (RedisProcess redis = RedisProcess.launch()) {
			LettuceConnectionFactory factory = new LettuceConnectionFactory("127.0.0.1", redis.port());
			factory.afterPropertiesSet();
			factory.start();
			try {
				test.accept(factory);
			}
			finally {
				factory.destroy();
			}
		}
	}

	@Test
	void eachTopologyIsDescribedByWhatItTries() {
		assertThat(DecisionWarmUp.addresses(new LettuceConnectionFactory(new RedisStandaloneConfiguration("redis.internal",
				6380)))).isEqualTo("redis.internal:6380");
		RedisSentinelConfiguration sentinel = new RedisSentinelConfiguration("mymaster", java.util.Set.of("s1:26379"));
		assertThat(DecisionWarmUp.addresses(new LettuceConnectionFactory(sentinel)))
			.isEqualTo("sentinel master 'mymaster' via s1:26379");
		RedisClusterConfiguration cluster = new RedisClusterConfiguration(List.of("n1:7000", "n2:7001"));
		assertThat(DecisionWarmUp.addresses(new LettuceConnectionFactory(cluster)))
			.isEqualTo("cluster nodes n1:7000, n2:7001");
	}

}
