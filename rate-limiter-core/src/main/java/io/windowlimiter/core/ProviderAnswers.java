package io.windowlimiter.core;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import io.windowlimiter.core.algorithm.Decision;
import io.windowlimiter.metering.LlmApi;
import io.windowlimiter.metering.LlmPrices;
import org.jspecify.annotations.Nullable;

/**
 * What an LLM route answers in its provider's own terms, as OpenAI's and Anthropic's APIs do, so that a client
 * built on their SDKs reads it as it reads the provider: the rate-limit headers of the request and token limits
 * ({@code x-ratelimit-*-requests|tokens}, {@code anthropic-ratelimit-*}), and every error it answers (a refusal
 * by a limit, a body it refuses, a missing key ...) as the provider's error object, whose message the SDKs raise
 * (their {@code RateLimitError}, {@code BadRequestError} ...). Shared by the filters of both gateways; problem
 * details stay for the routes without {@code llm}.
 */
public final class ProviderAnswers {

	/** OpenAI: the request quota of the request limit with least left. */
	public static final String OPENAI_LIMIT_REQUESTS = "x-ratelimit-limit-requests";

	public static final String OPENAI_REMAINING_REQUESTS = "x-ratelimit-remaining-requests";

	/** OpenAI: until that limit is whole again, as a Go duration ({@code 1s}, {@code 6m0s}, {@code 59.5s}). */
	public static final String OPENAI_RESET_REQUESTS = "x-ratelimit-reset-requests";

	public static final String OPENAI_LIMIT_TOKENS = "x-ratelimit-limit-tokens";

	/**
	 * OpenAI: what the token limit with least left has left after this call's reservation. The same header as the
	 * {@code X-RateLimit-Remaining-Tokens} these routes sent before (header names ignore case).
	 */
	public static final String OPENAI_REMAINING_TOKENS = "x-ratelimit-remaining-tokens";

	public static final String OPENAI_RESET_TOKENS = "x-ratelimit-reset-tokens";

	/** Anthropic's headers: {@code -limit}, {@code -remaining}, {@code -reset} (RFC 3339, UTC) after each. */
	public static final String ANTHROPIC_REQUESTS = "anthropic-ratelimit-requests";

	public static final String ANTHROPIC_TOKENS = "anthropic-ratelimit-tokens";

	/** The tokens left, as every LLM route sent it before the providers' headers: kept on Anthropic's routes. */
	public static final String REMAINING_TOKENS = "X-RateLimit-Remaining-Tokens";

	/**
	 * The SDKs' own header: {@code false} tells them not to retry. Their retry after a 429 waits whatever
	 * {@code Retry-After} says (OpenAI's Node SDK without a bound): a daily budget spent would hold the caller for
	 * hours; so a refusal that will not pass within {@link #LONGEST_RETRY_MILLIS} says so, and the SDK raises at once.
	 */
	public static final String SHOULD_RETRY = "x-should-retry";

	/** The longest wait a refusal leaves the SDKs to retry after: a minute, a per-minute limit's whole window. */
	public static final long LONGEST_RETRY_MILLIS = 60_000;

	private ProviderAnswers() {
	}

	/**
	 * The provider's headers of an answer the core decided: its request and token limits' state, and on a refusal
	 * that will not pass soon {@code x-should-retry: false}. Beside the answer's own headers (Retry-After, RateLimit).
	 */
	public static Map<String, String> headers(LlmApi api, Admission admission) {
		LlmQuotas quotas = admission.quotas();
		if (quotas == null) {
			return Map.of();
		}
		Map<String, String> headers = headers(api, quotas);
		if (!admission.passes() && retryPointless(quotas.refusedBy())) {
			headers.put(SHOULD_RETRY, "false");
		}
		return headers;
	}

	/**
	 * The body of a refusal the core decided, in the provider's shape: by a limit ({@link #refusal}), for who the
	 * client is (a deny list, an operator's block: 403), or by the fail-mode when Redis could not decide.
	 */
	public static String body(LlmApi api, Admission admission, int status) {
		LlmQuotas quotas = admission.quotas();
		LlmQuotas.Refusal refusal = (quotas != null) ? quotas.refusedBy() : null;
		if (refusal != null) {
			return refusal(api, refusal, status);
		}
		if (admission.forbidden()) {
			return error(api, status, QuotaProblem.FORBIDDEN);
		}
		// no limit's state known: the route's fail-mode refused it (closed, or local's share) while Redis could not decide
		String retryAfter = admission.headers().get(RateLimitHeaders.RETRY_AFTER);
		String message = "Rate limit reached: the rate limiter could not ask its Redis in time, and this route's "
				+ "fail-mode refused the call" + (admission.violated().isEmpty() ? ""
						: " (this instance's share of " + String.join(", ", admission.violated()) + ")")
				+ ((retryAfter != null) ? ". Please try again in " + retryAfter + "s." : ".");
		return error(api, status, "{\"detail\":" + QuotaProblem.jsonString(message) + "}");
	}

	/** The provider's rate-limit headers of the call's request and token limits (none of what is not known). */
	public static Map<String, String> headers(LlmApi api, LlmQuotas quotas) {
		Map<String, String> headers = new LinkedHashMap<>();
		LlmQuotas.Quota requests = quotas.requests();
		LlmQuotas.Quota tokens = quotas.tokens();
		if (api == LlmApi.OPENAI) {
			if (requests != null) {
				headers.put(OPENAI_LIMIT_REQUESTS, Long.toString(requests.limit()));
				headers.put(OPENAI_REMAINING_REQUESTS, Long.toString(requests.remaining()));
				headers.put(OPENAI_RESET_REQUESTS, goDuration(requests.resetMillis()));
			}
			if (tokens != null) {
				headers.put(OPENAI_LIMIT_TOKENS, Long.toString(tokens.limit()));
				headers.put(OPENAI_REMAINING_TOKENS, Long.toString(tokens.remaining()));
				headers.put(OPENAI_RESET_TOKENS, goDuration(tokens.resetMillis()));
			}
			money(headers, quotas.money());
			return headers;
		}
		if (requests != null) {
			anthropic(headers, ANTHROPIC_REQUESTS, requests);
		}
		if (tokens != null) {
			anthropic(headers, ANTHROPIC_TOKENS, tokens);
			headers.put(REMAINING_TOKENS, Long.toString(tokens.remaining()));
		}
		money(headers, quotas.money());
		return headers;
	}

	/** The money limit with least left ({@code unit: usd}), in US dollars: {@value #LIMIT_USD}, {@value #REMAINING_USD}. */
	public static final String LIMIT_USD = "X-RateLimit-Limit-Usd";

	/** What the money limit with least left has left, in US dollars, after this call's reservation. */
	public static final String REMAINING_USD = "X-RateLimit-Remaining-Usd";

	/**
	 * Neither provider has a header of money: the gateway's own, beside {@code X-RateLimit-Remaining-Tokens}, in
	 * dollars as written in configuration ({@code 4.985}); its reset is the limit's, in {@code RateLimit}.
	 */
	private static void money(Map<String, String> headers, LlmQuotas.@Nullable Quota money) {
		if (money != null) {
			headers.put(LIMIT_USD, LlmPrices.dollars(money.limit()));
			headers.put(REMAINING_USD, LlmPrices.dollars(money.remaining()));
		}
	}

	private static void anthropic(Map<String, String> headers, String prefix, LlmQuotas.Quota quota) {
		headers.put(prefix + "-limit", Long.toString(quota.limit()));
		headers.put(prefix + "-remaining", Long.toString(quota.remaining()));
		// whole seconds, rounded up: a client that waits until then is never early
		long at = quota.atMillis() + Math.max(0, quota.resetMillis());
		headers.put(prefix + "-reset", Instant.ofEpochSecond(Math.floorDiv(at + 999, 1000)).toString());
	}

	/**
	 * Whether the SDKs should be told not to retry a refusal ({@link #SHOULD_RETRY}): it can never pass, or not
	 * within {@link #LONGEST_RETRY_MILLIS}.
	 */
	public static boolean retryPointless(LlmQuotas.@Nullable Refusal refusal) {
		return refusal != null && (refusal.retryAfterMillis() == Decision.NEVER
				|| refusal.retryAfterMillis() > LONGEST_RETRY_MILLIS);
	}

	/**
	 * The body of a refusal by a limit: OpenAI's {@code {"error":{"message","type":"tokens"|"requests","param":null,
	 * "code":"rate_limit_exceeded"}}}, Anthropic's {@code {"type":"error","error":{"type":"rate_limit_error",
	 * "message"}}}; the message names the limit, what it had left, what the call asked and when to retry.
	 */
	public static String refusal(LlmApi api, LlmQuotas.Refusal refusal, int status) {
		String message = message(refusal);
		if (api == LlmApi.OPENAI) {
			// a budget in money spent is what OpenAI answers insufficient_quota; its SDKs raise RateLimitError for both
			return refusal.money() ? openai(message, "insufficient_quota", null, "insufficient_quota")
					: openai(message, refusal.tokens() ? "tokens" : "requests", null, "rate_limit_exceeded");
		}
		return anthropic((status == 429) ? "rate_limit_error" : anthropicType(status), message);
	}

	/**
	 * Any other error of an LLM route in the provider's shape: the problem-details body the route answers without
	 * {@code llm}, its {@code detail} as the message (its {@code field}, a body's field, as OpenAI's {@code param}),
	 * typed as the provider types its errors of that status.
	 * @param problem an RFC 9457 body this library wrote
	 */
	public static String error(LlmApi api, int status, String problem) {
		String message = member(problem, "detail");
		String quotedMessage = (message != null) ? message : QuotaProblem.jsonString("HTTP " + status);
		if (api == LlmApi.OPENAI) {
			String type = (status == 429) ? "requests" : (status >= 500) ? "server_error" : "invalid_request_error";
			return "{\"error\":{\"message\":" + quotedMessage + ",\"type\":\"" + type + "\",\"param\":"
					+ orNull(member(problem, "field")) + ",\"code\":" + ((status == 429) ? "\"rate_limit_exceeded\"" : "null")
					+ "}}";
		}
		return "{\"type\":\"error\",\"error\":{\"type\":\"" + anthropicType(status) + "\",\"message\":" + quotedMessage
				+ "}}";
	}

	/** Anthropic's error type for a status, as its API documents them. */
	static String anthropicType(int status) {
		return switch (status) {
			case 401 -> "authentication_error";
			case 403 -> "permission_error";
			case 404 -> "not_found_error";
			case 413 -> "request_too_large";
			case 429 -> "rate_limit_error";
			case 503, 529 -> "overloaded_error";
			default -> (status >= 500) ? "api_error" : "invalid_request_error";
		};
	}

	private static String openai(String message, String type, @Nullable String param, String code) {
		return "{\"error\":{\"message\":" + QuotaProblem.jsonString(message) + ",\"type\":\"" + type + "\",\"param\":"
				+ ((param != null) ? QuotaProblem.jsonString(param) : "null") + ",\"code\":\"" + code + "\"}}";
	}

	private static String anthropic(String type, String message) {
		return "{\"type\":\"error\",\"error\":{\"type\":\"" + type + "\",\"message\":" + QuotaProblem.jsonString(message)
				+ "}}";
	}

	/**
	 * What a refusal tells the client, in OpenAI's words where they fit ({@code Rate limit reached ... Limit 30000,
	 * Used ..., Requested 1500. Please try again in 1.2s.}): the limit, what it has left, what the call asked, and
	 * when to retry.
	 */
	static String message(LlmQuotas.Refusal refusal) {
		if (refusal.money()) {
			return moneyMessage(refusal);
		}
		String unit = refusal.concurrency() ? "calls in flight" : refusal.tokens() ? "tokens" : "requests";
		StringBuilder message = new StringBuilder("Rate limit reached on ").append(unit).append(" (limit '")
			.append(refusal.name())
			.append("': ")
			.append(refusal.limit())
			.append(' ')
			.append(unit);
		if (!refusal.concurrency()) {
			message.append(" per ").append(span(refusal.windowMillis()));
		}
		message.append("): Remaining ").append(Math.max(0, refusal.remaining()));
		if (refusal.asked() >= 0) {
			message.append(", Requested ").append(refusal.asked());
		}
		return ending(message, refusal,
				"This call asks more than the limit allows at once and will not pass; ask for fewer " + unit);
	}

	/** A money limit's refusal, in dollars: {@code Budget reached (limit 'team': $5 per 1d): Remaining $0.004, ...}. */
	private static String moneyMessage(LlmQuotas.Refusal refusal) {
		StringBuilder message = new StringBuilder("Budget reached (limit '").append(refusal.name())
			.append("': $")
			.append(LlmPrices.dollars(refusal.limit()))
			.append(" per ")
			.append(span(refusal.windowMillis()))
			.append("): Remaining $")
			.append(LlmPrices.dollars(Math.max(0, refusal.remaining())));
		if (refusal.asked() >= 0) {
			message.append(", Requested $").append(LlmPrices.dollars(refusal.asked()));
		}
		return ending(message, refusal, "This call may cost more than the budget allows at once and will not pass; "
				+ "ask for fewer output tokens (max_tokens)");
	}

	/** A refusal's message ends with when to retry, or {@code never} when the call can never pass. */
	private static String ending(StringBuilder message, LlmQuotas.Refusal refusal, String never) {
		if (refusal.retryAfterMillis() == Decision.NEVER) {
			message.append(". ").append(never);
		}
		else {
			message.append(". Please try again in ").append(goDuration(Math.max(1, refusal.retryAfterMillis())));
		}
		return message.append('.').toString();
	}

	/**
	 * Milliseconds as Go prints a duration, as OpenAI writes its resets: {@code 0s}, {@code 12ms}, {@code 1s},
	 * {@code 59.5s}, {@code 6m0s}, {@code 1h2m3s}.
	 */
	public static String goDuration(long millis) {
		if (millis <= 0) {
			return "0s";
		}
		if (millis < 1000) {
			return millis + "ms";
		}
		long hours = millis / 3_600_000;
		long minutes = millis / 60_000 % 60;
		long seconds = millis / 1000 % 60;
		long fraction = millis % 1000;
		StringBuilder out = new StringBuilder();
		if (hours > 0) {
			out.append(hours).append('h');
		}
		if (hours > 0 || minutes > 0) {
			out.append(minutes).append('m');
		}
		out.append(seconds);
		if (fraction > 0) {
			String digits = Long.toString(1000 + fraction).substring(1);
			out.append('.').append(digits.replaceAll("0+$", ""));
		}
		return out.append('s').toString();
	}

	/** A window as people write it: {@code 1m}, {@code 1h}, {@code 1d}, {@code 1m30s}, {@code 500ms}. */
	static String span(long millis) {
		if (millis % 86_400_000 == 0) {
			return (millis / 86_400_000) + "d";
		}
		if (millis < 1000 || millis % 1000 != 0) {
			return millis + "ms";
		}
		long seconds = millis / 1000;
		StringBuilder out = new StringBuilder();
		if (seconds >= 3600) {
			out.append(seconds / 3600).append('h');
		}
		if (seconds % 3600 >= 60) {
			out.append(seconds % 3600 / 60).append('m');
		}
		if (seconds % 60 > 0) {
			out.append(seconds % 60).append('s');
		}
		return out.toString();
	}

	/**
	 * A string member of a problem body this library wrote, as its JSON (quotes and escapes kept); null when absent.
	 * Those bodies are flat objects of string and number members written by {@link QuotaProblem#jsonString}.
	 */
	static @Nullable String member(String problem, String name) {
		String key = "\"" + name + "\":\"";
		int start = problem.indexOf(key);
		if (start < 0) {
			return null;
		}
		int at = start + key.length();
		while (at < problem.length()) {
			char c = problem.charAt(at);
			if (c == '\\') {
				at += 2;
				continue;
			}
			if (c == '"') {
				return problem.substring(start + key.length() - 1, at + 1);
			}
			at++;
		}
		return null;
	}

	private static String orNull(@Nullable String json) {
		return (json != null) ? json : "null";
	}

}
