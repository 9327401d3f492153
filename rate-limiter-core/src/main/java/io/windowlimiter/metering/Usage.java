package io.windowlimiter.metering;

/**
 * The tokens an upstream reported for one response, as far as it was read. A figure the response did not
 * carry is 0.
 *
 * @param outcome whether the usage is final, partial or absent
 * @param inputTokens prompt tokens not read from a cache ({@code prompt_tokens} or {@code input_tokens}; for
 * OpenAI this includes its cached tokens, which it does not report apart at this level)
 * @param outputTokens {@code completion_tokens} or {@code output_tokens} (reasoning tokens included)
 * @param cacheCreationInputTokens Anthropic's {@code cache_creation_input_tokens}
 * @param cacheReadInputTokens Anthropic's {@code cache_read_input_tokens}
 * @param totalTokens {@code total_tokens} where the upstream sent it (OpenAI), else 0
 * @param streamedTextBytes bytes of output text streamed in deltas, for a stream cut before its usage
 * @param cachedInputTokens OpenAI's prompt tokens read from its cache ({@code prompt_tokens_details.cached_tokens},
 * the Responses API's {@code input_tokens_details.cached_tokens}): part of {@code inputTokens}, priced apart
 */
public record Usage(Outcome outcome, long inputTokens, long outputTokens, long cacheCreationInputTokens,
		long cacheReadInputTokens, long totalTokens, long streamedTextBytes, long cachedInputTokens) {

	/** A usage without OpenAI's cached prompt tokens. */
	public Usage(Outcome outcome, long inputTokens, long outputTokens, long cacheCreationInputTokens,
			long cacheReadInputTokens, long totalTokens, long streamedTextBytes) {
		this(outcome, inputTokens, outputTokens, cacheCreationInputTokens, cacheReadInputTokens, totalTokens,
				streamedTextBytes, 0);
	}

	/**
	 * Bytes of streamed text counted as one output token when a stream ends before its usage: the usual
	 * four characters of English per token, so a client that hangs up is charged about what it received.
	 */
	public static final int STREAMED_BYTES_PER_TOKEN = 4;

	/** Nothing read. */
	public static final Usage NONE = new Usage(Outcome.NONE, 0, 0, 0, 0, 0, 0);

	/** How much of a response's usage was read. */
	public enum Outcome {

		/** The upstream's closing usage was read: the figures are the final count. */
		REPORTED,

		/**
		 * Some figures or output text were read, not the closing usage: the stream was cut (client gone,
		 * upstream failed) or the upstream does not report usage on streams.
		 */
		PARTIAL,

		/**
		 * An error from the upstream before any usage or text: an error body ({@code {"error": {...}}}, at
		 * whatever status) or an error event first in a stream (Anthropic's {@code overloaded_error} on a 200).
		 */
		ERROR,

		/** No usage, no output text, no error object: not an LLM response this meter knows. */
		NONE

	}

	/**
	 * The tokens the response used: input, both cache figures and output, or the reported total when that
	 * is larger. Cache reads and writes count in full: a budget limits the tokens an upstream processes for
	 * a client, whatever the provider bills for them, and so an Anthropic prompt costs what the same
	 * prompt costs on OpenAI, whose {@code prompt_tokens} include its cached tokens.
	 */
	public long tokens() {
		return Math.max(this.totalTokens,
				this.inputTokens + this.cacheCreationInputTokens + this.cacheReadInputTokens + this.outputTokens);
	}

	/**
	 * What was seen so far: {@link #tokens()}, with the output taken as at least the streamed text
	 * ({@link #STREAMED_BYTES_PER_TOKEN} bytes a token, rounded up).
	 */
	public long observedTokens() {
		long streamed = (this.streamedTextBytes + STREAMED_BYTES_PER_TOKEN - 1) / STREAMED_BYTES_PER_TOKEN;
		long input = this.inputTokens + this.cacheCreationInputTokens + this.cacheReadInputTokens;
		return Math.max(this.totalTokens, input + Math.max(this.outputTokens, streamed));
	}

	/**
	 * The tokens to charge a response that reserved {@code reservedTokens} at admission and ended with
	 * {@code status} (whether it completed or was cancelled):
	 * <ul>
	 * <li>{@link Outcome#REPORTED}: {@link #tokens()}, exactly what the upstream counted;</li>
	 * <li>{@link Outcome#PARTIAL} (a stream cut or without usage): the larger of the reservation and
	 * {@link #observedTokens()}, so hanging up early never costs less than the reservation;</li>
	 * <li>{@link Outcome#ERROR}, or {@link Outcome#NONE} with a status of 400 or more: 0, an upstream
	 * error before any token is refunded;</li>
	 * <li>{@link Outcome#NONE} otherwise: the reservation.</li>
	 * </ul>
	 */
	public long charge(long reservedTokens, int status) {
		return switch (this.outcome) {
			case REPORTED -> tokens();
			case PARTIAL -> Math.max(reservedTokens, observedTokens());
			case ERROR -> 0;
			case NONE -> status >= 400 ? 0 : reservedTokens;
		};
	}

	/**
	 * What the response costs in whole micro-dollars at {@code price}, by the same rules as {@link #charge}: the
	 * reported figures each at its price (OpenAI's cached prompt tokens at the cached-input price, the rest of its
	 * prompt at the input price; Anthropic's cache reads and writes at theirs; reasoning is output); a stream cut
	 * or without usage at least {@code reservedMicroDollars}, and what was seen when that is more; an upstream
	 * error before any token, nothing; no usage at all, the reservation (nothing after a status of 400 or more).
	 */
	public long chargeMicroDollars(LlmPrices.Price price, long reservedMicroDollars, int status) {
		return switch (this.outcome) {
			case REPORTED -> microDollars(price, this.outputTokens);
			case PARTIAL -> Math.max(reservedMicroDollars, observedMicroDollars(price));
			case ERROR -> 0;
			case NONE -> status >= 400 ? 0 : reservedMicroDollars;
		};
	}

	/** What was seen so far at {@code price}: the output taken as at least the streamed text, as {@link #observedTokens}. */
	public long observedMicroDollars(LlmPrices.Price price) {
		long streamed = (this.streamedTextBytes + STREAMED_BYTES_PER_TOKEN - 1) / STREAMED_BYTES_PER_TOKEN;
		return microDollars(price, Math.max(this.outputTokens, streamed));
	}

	private long microDollars(LlmPrices.Price price, long output) {
		long cached = Math.min(this.cachedInputTokens, this.inputTokens);
		// a total above the figures (an upstream reporting reasoning apart from its output) counts in tokens, so it
		// is priced too: as output, which reasoning is
		long unlisted = Math.max(0, this.totalTokens
				- (this.inputTokens + this.cacheCreationInputTokens + this.cacheReadInputTokens + output));
		return price.microDollars(this.inputTokens - cached, cached, output + unlisted, this.cacheReadInputTokens,
				this.cacheCreationInputTokens);
	}

}
