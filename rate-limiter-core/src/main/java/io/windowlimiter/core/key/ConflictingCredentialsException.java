package io.windowlimiter.core.key;

import java.util.List;

import io.windowlimiter.core.QuotaProblem;

/**
 * A request whose credential headers ({@link ApiKeys}) carry different credentials: the gateway would key it by
 * one while the upstream may authenticate it by another (Anthropic reads {@code x-api-key}, OpenAI
 * {@code Authorization}), so a client could be counted under a key of its own making while another is charged
 * nothing. Refused with 400 naming the headers, before any limit is asked; the same key in several headers is
 * one credential and passes.
 */
public final class ConflictingCredentialsException extends RuntimeException {

	private final List<String> headers;

	/** @param headers the headers carrying a credential, as {@link ApiKeys} names them */
	public ConflictingCredentialsException(List<String> headers) {
		super("The request carries different credentials in " + String.join(", ", headers), null, false, false);
		this.headers = List.copyOf(headers);
	}

	/** The headers carrying a credential, in the order {@link ApiKeys} reads them. */
	public List<String> headers() {
		return this.headers;
	}

	/** The 400 answer, as problem details: {@code header} names the headers, comma-separated. */
	public String problem() {
		String names = String.join(", ", this.headers);
		String detail = "The request carries different credentials in " + names + "; send one API key, in one of "
				+ "these headers, or the same key in each";
		return "{\"type\":\"about:blank\",\"title\":\"Bad Request\",\"status\":400,\"detail\":"
				+ QuotaProblem.jsonString(detail) + ",\"header\":" + QuotaProblem.jsonString(names) + "}";
	}

}
