package io.windowlimiter.mvc;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import io.windowlimiter.core.Reservation;
import io.windowlimiter.core.ResponseCost;
import io.windowlimiter.core.failure.RedisBudget;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.function.HandlerFunction;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/**
 * An admitted request whose cost its response decides ({@code count-statuses}, {@code cost-from-response-header}),
 * through every attempt a {@code Retry} filter makes of it: settled once, by the response the client gets as its
 * writing starts, else (no response of it written) by the last attempt when the request's handling ends. An
 * exception (downstream unreachable, timed out) is settled by the status the client is answered, as on WebFlux.
 */
final class MvcResponseSettle implements MvcAttempts.Attempt, MvcAttempts.Unsettled {

	private final MvcRateLimiter limiter;

	private final WindowRateLimitConfig config;

	private final Reservation reservation;

	private final RedisBudget budget;

	private final Map<String, String> headers;

	private final AtomicBoolean settled = new AtomicBoolean();

	/** The last attempt's status and cost header, for a request no written response settled. */
	private int lastStatus = 500;

	private @Nullable String lastCost;

	MvcResponseSettle(MvcRateLimiter limiter, WindowRateLimitConfig config, Reservation reservation,
			RedisBudget budget, Map<String, String> headers) {
		this.limiter = limiter;
		this.config = config;
		this.reservation = reservation;
		this.budget = budget;
		this.headers = headers;
	}

	@Override
	public ServerResponse again(ServerRequest request, HandlerFunction<ServerResponse> next) throws Exception {
		ServerResponse response;
		try {
			response = next.handle(request);
		}
		catch (Exception ex) {
			last(MvcRateLimiter.failedStatus(ex), null);
			throw ex;
		}
		String header = this.config.getCostFromResponseHeader();
		int status = response.statusCode().value();
		String cost = (header != null) ? response.headers().getFirst(header) : null;
		last(status, cost);
		MvcRateLimiter.addHeaders(response, this.headers);
		return new SettledOnWriteResponse(response, () -> settle(status, cost));
	}

	private void last(int status, @Nullable String cost) {
		this.lastStatus = status;
		this.lastCost = cost;
	}

	@Override
	public void settleByLastAttempt() {
		settle(this.lastStatus, this.lastCost);
	}

	private void settle(int status, @Nullable String cost) {
		if (this.settled.compareAndSet(false, true)) {
			this.limiter.settle(this.reservation, ResponseCost.actual(this.config.statusesThatCount(), status, cost,
					this.reservation.cost()), this.budget);
		}
	}

}
