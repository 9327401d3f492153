package io.windowlimiter.benchmarks;

import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import reactor.core.publisher.Flux;

import org.springframework.data.redis.connection.ReactiveRedisConnectionFactory;
import org.springframework.data.redis.core.ReactiveStringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * A template that notes the last script run through it, with its KEYS and ARGV, so that
 * redis-benchmark can be given exactly what the library sends, whatever script and arguments the
 * library builds. Used for one probing decision, never while measuring.
 */
final class RecordingRedisTemplate extends ReactiveStringRedisTemplate {

	/** One script run as sent. */
	record ScriptCall(RedisScript<?> script, List<String> keys, List<String> args) {
	}

	private final AtomicReference<ScriptCall> lastCall = new AtomicReference<>();

	RecordingRedisTemplate(ReactiveRedisConnectionFactory connectionFactory) {
		super(connectionFactory);
	}

	@Override
	public <T> Flux<T> execute(RedisScript<T> script, List<String> keys, List<?> args) {
		this.lastCall.set(new ScriptCall(script, List.copyOf(keys), args.stream().map(String::valueOf).toList()));
		return super.execute(script, keys, args);
	}

	/** The last script run, or null. */
	ScriptCall lastCall() {
		return this.lastCall.get();
	}

}
