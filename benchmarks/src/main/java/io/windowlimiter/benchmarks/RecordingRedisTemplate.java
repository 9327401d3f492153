package io.windowlimiter.benchmarks;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import reactor.core.publisher.Flux;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A template that notes the KEYS and ARGV of the last run of each script, so that redis-benchmark
 * can be given exactly what the library sends, whatever arguments an algorithm adds. Used for one
 * probing decision, never while measuring.
 */
final class RecordingRedisTemplate extends ReactiveStringRedisTemplate {

	/** One script run as sent. */
	record ScriptCall(List<String> keys, List<String> args) {
	}

	private final Map<String, ScriptCall> lastCalls = new ConcurrentHashMap<>();

	RecordingRedisTemplate(ReactiveRedisConnectionFactory connectionFactory) {
		super(connectionFactory);
	}

	@Override
	public <T> Flux<T> execute(RedisScript<T> script, List<String> keys, List<?> args) {
		this.lastCalls.put(script.getSha1(),
				new ScriptCall(List.copyOf(keys), args.stream().map(String::valueOf).toList()));
		return super.execute(script, keys, args);
	}

	/** The last run of the script with this SHA, or null. */
	ScriptCall lastCall(String sha) {
		return this.lastCalls.get(sha);
	}

}
