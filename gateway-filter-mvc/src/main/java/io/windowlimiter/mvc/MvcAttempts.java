package io.windowlimiter.mvc;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

import jakarta.servlet.ServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * What the {@code WindowRateLimit} filters of one client request made of its first attempt, kept in the request's
 * attributes. Server MVC's {@code Retry} filter runs the filters listed after it again, on the same request, once
 * per attempt, and keeps the attributes; a retry is not a new client request, so a filter that finds its first
 * attempt here neither decides nor counts the request again ({@link Attempt#again}): an admitted request goes on
 * to the next attempt as admitted (an LLM call sends the body it read), a refused one is answered the same refusal,
 * never sent on.
 *
 * <p>A request whose cost the response decides is settled once, by its final outcome: the response written to the
 * client settles it as its writing starts, and the attempts {@code Retry} discarded are never written. What no
 * written response settled (every attempt failed and {@code Retry} gave up with an exception, the proxy failed, a
 * filter answered another response) {@link MvcFinalSettles} settles by the last attempt when the request's handling
 * ends, before an error answer is written. The filters of a request run on its thread, one after the other.
 */
final class MvcAttempts {

	private static final String ATTRIBUTE = MvcAttempts.class.getName();

	/** A filter's request after its first attempt: how another attempt of it goes. */
	@FunctionalInterface
	interface Attempt {

		ServerResponse again(ServerRequest request, HandlerFunction<ServerResponse> next) throws Exception;

	}

	/** A settle waiting for the request's final outcome. */
	interface Unsettled {

		/** Settles by the last attempt's outcome, unless a written response settled it already. */
		void settleByLastAttempt();

	}

	/** Each filter's first attempt, by the filter's config (one per filter of a route). */
	private final Map<Object, Attempt> attempts = new IdentityHashMap<>(2);

	private final List<Unsettled> unsettled = new ArrayList<>(1);

	/** The request's, made by the first filter that asks. */
	static MvcAttempts of(ServerRequest request) {
		Object attempts = request.attributes().computeIfAbsent(ATTRIBUTE, name -> new MvcAttempts());
		return (attempts instanceof MvcAttempts known) ? known : new MvcAttempts();
	}

	/** Settles what no written response of this request settled: its handling has ended. */
	static void settleUnsettled(ServletRequest request) {
		if (request.getAttribute(ATTRIBUTE) instanceof MvcAttempts attempts) {
			for (Unsettled settle : attempts.unsettled) {
				settle.settleByLastAttempt();
			}
		}
	}

	/** The first attempt of {@code filter} at this request, or null when this is its first. */
	@Nullable Attempt earlier(Object filter) {
		return this.attempts.get(filter);
	}

	/** Records how another attempt of {@code filter} at this request goes. */
	void first(Object filter, Attempt attempt) {
		this.attempts.put(filter, attempt);
	}

	/** Records a settle to make when the request's handling ends, unless a written response made it. */
	void unsettled(Unsettled settle) {
		this.unsettled.add(settle);
	}

}
