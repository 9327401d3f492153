package io.windowlimiter.gateway.algorithm;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import reactor.core.publisher.Mono;

import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The one Lua script that decides a request: {@code decide.lua} preceded by the module of every
 * {@link Algorithm}, assembled once and run by SHA (Spring Data Redis falls back to EVAL when Redis answers
 * NOSCRIPT). One round trip decides every limit of a route atomically, all or nothing.
 */
public final class LimitScript {

	private final ReactiveStringRedisTemplate redis;

	private final RedisScript<List<Long>> script;

	@SuppressWarnings({ "rawtypes", "unchecked" })
	public LimitScript(ReactiveStringRedisTemplate redis) {
		this.redis = redis;
		StringBuilder source = new StringBuilder("local algorithms = {}\n");
		for (Algorithm algorithm : Algorithm.values()) {
			source.append(read(algorithm.moduleFile())).append('\n');
		}
		source.append(read("decide.lua"));
		this.script = (RedisScript) RedisScript.of(source.toString(), List.class);
	}

	/** One limit of a decision: the client's key for it and the limit itself, which names its algorithm. */
	public record Limit(String key, WindowPolicy policy) {
	}

	/**
	 * Decides one request.
	 * @param limits every limit of the route; their keys must share one hash tag
	 * @param cost what the request consumes of every limit
	 * @param now time in ms since the epoch, or empty for the Redis server's clock
	 */
	public Mono<Verdict> decide(List<Limit> limits, long cost, String now) {
		List<String> keys = new ArrayList<>(limits.size());
		List<WindowPolicy> policies = new ArrayList<>(limits.size());
		for (Limit limit : limits) {
			keys.add(limit.key());
			policies.add(limit.policy());
		}
		return decide(keys, arguments(policies, cost, now));
	}

	/**
	 * Decides one request against one limit, e.g. for tests and the tools that replay traffic.
	 * @param key the client's key for this limit
	 * @param cost what the request consumes of the limit
	 * @param now time in ms since the epoch, or empty for the Redis server's clock
	 */
	public Mono<Decision> decideOne(String key, WindowPolicy policy, long cost, String now) {
		return decide(List.of(new Limit(key, policy)), cost, now).map(verdict -> verdict.decisions().get(0));
	}

	/**
	 * Decides one request with arguments built ahead by {@link #arguments}: a route's are the same for
	 * every request, only the keys differ.
	 * @param keys one per limit, sharing one hash tag
	 */
	public Mono<Verdict> decide(List<String> keys, List<String> arguments) {
		return this.redis.execute(this.script, keys, arguments)
			.next()
			.map(reply -> Verdict.fromReply(reply, keys.size()));
	}

	/**
	 * The script's ARGV for these limits (in order, each deciding by its policy's algorithm), this cost
	 * and this time ("" for the Redis clock).
	 */
	public static List<String> arguments(List<WindowPolicy> policies, long cost, String now) {
		List<String> args = new ArrayList<>(2 + 4 * policies.size());
		args.add(now);
		args.add(Long.toString(cost));
		for (WindowPolicy policy : policies) {
			Algorithm algorithm = policy.algorithm();
			args.add(algorithm.name());
			args.add(Long.toString(policy.limit()));
			args.add(Long.toString(policy.windowMillis()));
			args.add(algorithm.extra(policy));
		}
		return List.copyOf(args);
	}

	/**
	 * Loads the script into Redis ahead of the first request, which also opens the connection: the first
	 * decision then costs one round trip like any other instead of a connect and a NOSCRIPT retry.
	 */
	public Mono<String> load() {
		ByteBuffer source = ByteBuffer.wrap(this.script.getScriptAsString().getBytes(StandardCharsets.UTF_8));
		return this.redis.execute(connection -> connection.scriptingCommands().scriptLoad(source)).next();
	}

	/** The assembled script, e.g. for tests that run it by hand. */
	public RedisScript<List<Long>> script() {
		return this.script;
	}

	private static String read(String file) {
		try (InputStream in = LimitScript.class.getResourceAsStream(file)) {
			if (in == null) {
				throw new IllegalStateException("Script " + file + " is missing beside " + LimitScript.class);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
