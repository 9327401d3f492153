package io.windowlimiter.metering;

/**
 * The tokens reserved for an LLM request at admission: a bound of its prompt from the body's length plus
 * the output it allows for each of its choices, capped.
 *
 * @param promptTokens the body's length divided by the bytes per token, rounded up
 * @param outputTokens the request's largest of {@code max_tokens}, {@code max_completion_tokens},
 * {@code max_output_tokens}, else the configured default, times its {@linkplain LlmRequest#choices() choices}
 * ({@code n}, {@code best_of}); {@link Long#MAX_VALUE} when that is more than a long holds
 * @param tokens what to reserve: their sum, at most the ceiling given (at least 1)
 */
public record TokenEstimate(long promptTokens, long outputTokens, long tokens) {

	/**
	 * The prompt's bound: a token of OpenAI's and Anthropic's tokenizers is one byte or more of UTF-8 text,
	 * so the body's length in bytes is a true upper bound of the tokens of the text it carries (JSON
	 * escapes and keys only add bytes; a request's per-message framing costs fewer tokens than its
	 * {@code {"role":...,"content":...}} bytes). Dividing by 2 keeps a bound for every text seen in
	 * practice (English runs 4 to 5 bytes a token, code about 3, CJK about 2 to 3 since each character is
	 * 3 bytes) while reserving half of what the strict bound does; 1 is the strict bound.
	 * Images are the exception either way: a short URL may cost hundreds of tokens, a base64 image far fewer
	 * than its bytes; the cap and the settling at the end bound both errors.
	 */
	public static final int DEFAULT_BYTES_PER_TOKEN = 2;

	/** The output reserved for a request that names no maximum (OpenAI's may omit it). */
	public static final long DEFAULT_OUTPUT_TOKENS = 1024;

	/**
	 * The estimate of a request read at admission.
	 * @param bytesPerToken bytes of body counted as one prompt token, at least 1
	 * @param defaultOutputTokens output reserved when the request names no maximum, at least 0
	 * @param ceiling the smallest token limit of the route: one estimate never exceeds it, so a small
	 * budget still admits its first call (the settle charges what was really used)
	 * @throws IllegalArgumentException for a request the gateway {@linkplain LlmRequest#refusal() refuses}: it is
	 * answered 400, never estimated
	 */
	public static TokenEstimate of(LlmRequest request, int bytesPerToken, long defaultOutputTokens, long ceiling) {
		if (bytesPerToken < 1) {
			throw new IllegalArgumentException("bytes per token must be at least 1, was " + bytesPerToken);
		}
		if (defaultOutputTokens < 0) {
			throw new IllegalArgumentException("default output tokens must be 0 or more, was " + defaultOutputTokens);
		}
		if (ceiling < 1) {
			throw new IllegalArgumentException("the token ceiling must be at least 1, was " + ceiling);
		}
		LlmRequest.Refusal refusal = request.refusal();
		if (refusal != null) {
			throw new IllegalArgumentException("a request the gateway refuses has no estimate: " + refusal.detail());
		}
		long prompt = (request.bodyLength() + (long) bytesPerToken - 1) / bytesPerToken;
		long perChoice = request.maxOutputTokens() >= 0 ? request.maxOutputTokens() : defaultOutputTokens;
		// each of n choices (best_of generations) may use the whole maximum
		long output = (perChoice == 0) ? 0 : (request.choices() > Long.MAX_VALUE / perChoice) ? Long.MAX_VALUE
				: perChoice * request.choices();
		long sum = prompt + output;
		if (sum < 0) {
			sum = Long.MAX_VALUE;
		}
		return new TokenEstimate(prompt, output, Math.max(1, Math.min(ceiling, sum)));
	}

	/** {@link #of(LlmRequest, int, long, long)} with the default bytes per token and output. */
	public static TokenEstimate of(LlmRequest request, long ceiling) {
		return of(request, DEFAULT_BYTES_PER_TOKEN, DEFAULT_OUTPUT_TOKENS, ceiling);
	}

}
