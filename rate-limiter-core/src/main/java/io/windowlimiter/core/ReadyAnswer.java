package io.windowlimiter.core;

import java.util.concurrent.RejectedExecutionException;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import reactor.core.publisher.Mono;

/**
 * An answer the limiter has at hand (the deny cache, a fail-mode, the ratelimits endpoint's 404 and 400),
 * completed in a later task of the current Netty event loop rather than synchronously.
 *
 * <p>Why: Reactor Netty 1.3.6 and 1.3.7 (Spring Boot 4.0.7 ships 1.3.6) can stop reading an HTTP/1.1
 * keep-alive connection for good, reactor/reactor-netty#4361. A request that arrives before the previous
 * request's operations have terminated is queued; when the queue is drained and that request is answered
 * synchronously, its operations terminate re-entrantly, a second drain is scheduled, and neither drain
 * asks the channel to read again. The client's next request is never read. A client whose first denial
 * came from Redis (another thread) and whose next one came from the deny cache (synchronously) hit it in
 * about 1 of 10 to 60 clients. Completed in a later task, the drain has finished and re-arms the read
 * when the answer's operations terminate. Answers from Redis arrive on Lettuce's threads and need none of
 * this.
 *
 * <p>The event loop is Netty's own record of the current thread's executor; a caller on any other
 * thread gets the answer at once, as it cannot be inside a drain.
 */
public final class ReadyAnswer {

	private ReadyAnswer() {
	}

	public static <T> Mono<T> of(T answer) {
		return Mono.create(sink -> {
			EventExecutor loop = ThreadExecutorMap.currentExecutor();
			if (loop == null) {
				sink.success(answer);
				return;
			}
			try {
				loop.execute(() -> sink.success(answer));
			}
			catch (RejectedExecutionException ex) {
				// the loop is shutting down; nothing is read on it any more either
				sink.success(answer);
			}
		});
	}

}
