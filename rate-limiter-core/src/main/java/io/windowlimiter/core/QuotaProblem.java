package io.windowlimiter.core;

import java.util.List;

/**
 * The RFC 9457 {@code application/problem+json} body of a refused request, of the IETF rate-limit draft's
 * {@code quota-exceeded} type, naming the violated policies; written by every adapter the same way.
 */
public final class QuotaProblem {

	/** The draft's problem type for a request over its quota. */
	public static final String QUOTA_EXCEEDED = "https://iana.org/assignments/http-problem-types#quota-exceeded";

	/** Its media type. */
	public static final String MEDIA_TYPE = "application/problem+json";

	/**
	 * The body of a 403 for who the client is (a deny list, an operator's block): RFC 9457's generic problem,
	 * since no quota was exceeded.
	 */
	public static final String FORBIDDEN = "{\"type\":\"about:blank\",\"title\":\"Forbidden\",\"status\":403,"
			+ "\"detail\":\"This client may not use this route: it is on a deny list or blocked by an operator\"}";

	private QuotaProblem() {
	}

	/** The body for a refusal with this status by these limits (their names, as {@link Admission#violated()}). */
	public static String json(int status, List<String> violated) {
		StringBuilder json = new StringBuilder("{\"type\":\"").append(QUOTA_EXCEEDED)
			.append("\",\"title\":\"Request cannot be satisfied as assigned quota has been exceeded\",\"status\":")
			.append(status)
			.append(",\"violated-policies\":[");
		for (int i = 0; i < violated.size(); i++) {
			json.append((i > 0) ? "," : "").append(jsonString(violated.get(i)));
		}
		return json.append("]}").toString();
	}

	/** A JSON string of {@code value}, quoted and escaped. */
	public static String jsonString(String value) {
		StringBuilder out = new StringBuilder("\"");
		for (char c : value.toCharArray()) {
			switch (c) {
				case '"' -> out.append("\\\"");
				case '\\' -> out.append("\\\\");
				default -> out.append((c < 0x20) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
			}
		}
		return out.append('"').toString();
	}

}
