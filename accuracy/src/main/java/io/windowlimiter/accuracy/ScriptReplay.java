package io.windowlimiter.accuracy;

import java.time.Duration;
import java.util.List;

import io.windowlimiter.core.algorithm.Algorithm;
import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.core.algorithm.LimitScript;
import io.windowlimiter.core.algorithm.WindowPolicy;
import io.windowlimiter.core.key.RedisKeys;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Replays a trace through one algorithm's real script on a real Redis, with the trace's times as the
 * script's clock: nothing sleeps, an hour of traffic replays in seconds.
 *
 * <p>Each client's requests are decided one after another in time order, as they would be in a
 * gateway; different clients are independent (their own keys), so many of them are in flight at once.
 */
public final class ScriptReplay {

	private final LimitScript script;

	private final int clientsInFlight;

	public ScriptReplay(LimitScript script, int clientsInFlight) {
		this.script = script;
		this.clientsInFlight = clientsInFlight;
	}

	/** The script's answers for every request of the trace, client by client in the trace's order. */
	public List<Answers> replay(Trace trace, Algorithm algorithm) {
		WindowPolicy policy = new WindowPolicy(algorithm, trace.limit(), trace.window());
		return Flux.fromIterable(trace.clients())
			.flatMapSequential(client -> replay(client, trace.name(), policy), this.clientsInFlight)
			.collectList()
			.block(Duration.ofMinutes(10));
	}

	private Mono<Answers> replay(ClientTrace client, String traceName, WindowPolicy policy) {
		String key = RedisKeys.of(traceName, client.client(), policy.algorithm().keySuffix());
		long[] times = client.times();
		Answers answers = new Answers(new boolean[times.length], new long[times.length]);
		return Flux.range(0, times.length)
			.concatMap(i -> this.script.decideOne(key, policy, 1, Long.toString(times[i]))
				.doOnNext(decision -> answers.record(i, decision)))
			.then(Mono.just(answers));
	}

	/**
	 * What the script answered for one client's requests.
	 *
	 * @param allowed whether each request was allowed
	 * @param remaining the remaining quota each answer reported
	 */
	public record Answers(boolean[] allowed, long[] remaining) {

		void record(int index, Decision decision) {
			this.allowed[index] = decision.allowed();
			this.remaining[index] = decision.remaining();
		}

	}

}
