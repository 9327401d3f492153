package io.windowlimiter.core;

import org.jspecify.annotations.Nullable;

/**
 * What an LLM call's answer tells of its client's quota by unit, as the providers' own headers and error bodies
 * tell it ({@link ProviderAnswers}): the request limit and the token limit with least left, and the limit that
 * refused the call. A concurrency limit counts calls in flight, not requests per window: it is no request quota,
 * and only shows as the limit that refused.
 *
 * @param requests the request limit (not a concurrency limit) with least left; null when the policy has none
 * or it is not known (a refusal the deny cache remembers by another limit)
 * @param tokens the token limit with least left, after this call's reservation; null when none is known
 * @param refusedBy the limit that refused the call; null when it passes
 * @param money the money limit ({@code unit: usd}) with least left, in micro-dollars, after this call's
 * reservation; null when none is known
 */
public record LlmQuotas(@Nullable Quota requests, @Nullable Quota tokens, @Nullable Refusal refusedBy,
		@Nullable Quota money) {

	/** Quotas without a money limit. */
	public LlmQuotas(@Nullable Quota requests, @Nullable Quota tokens, @Nullable Refusal refusedBy) {
		this(requests, tokens, refusedBy, null);
	}

	/**
	 * One limit's state.
	 * @param limit its quota ({@link RateLimitHeaders#quota})
	 * @param remaining what is left now (after this call when it passes)
	 * @param resetMillis how long until quota frees (each algorithm's reset), from {@code atMillis}
	 * @param atMillis when that was decided, ms since the epoch (Redis's clock when Redis decided)
	 */
	public record Quota(long limit, long remaining, long resetMillis, long atMillis) {
	}

	/**
	 * The limit that refused a call.
	 * @param name the limit's name ({@code chat-1})
	 * @param tokens whether it counts tokens; else requests (or calls in flight, {@code concurrency})
	 * @param concurrency whether it counts calls in flight
	 * @param limit its quota
	 * @param windowMillis its window
	 * @param remaining what it had left
	 * @param asked what the call asked of it: its estimate (capped) for a token limit, else its cost; -1 when not
	 * known (a refusal remembered before the call's body was read)
	 * @param retryAfterMillis when the call may pass, {@link io.windowlimiter.core.algorithm.Decision#NEVER} if never
	 * @param money whether it counts money ({@code unit: usd}): then limit, remaining and asked are micro-dollars
	 */
	public record Refusal(String name, boolean tokens, boolean concurrency, long limit, long windowMillis,
			long remaining, long asked, long retryAfterMillis, boolean money) {

		/** The refusal of a limit of tokens, requests or calls in flight. */
		public Refusal(String name, boolean tokens, boolean concurrency, long limit, long windowMillis, long remaining,
				long asked, long retryAfterMillis) {
			this(name, tokens, concurrency, limit, windowMillis, remaining, asked, retryAfterMillis, false);
		}

	}

}
