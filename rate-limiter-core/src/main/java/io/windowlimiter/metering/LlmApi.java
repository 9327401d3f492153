package io.windowlimiter.metering;

import java.util.Locale;

/** The API an LLM route speaks, as a route names it ({@code llm: openai}). */
public enum LlmApi {

	/**
	 * OpenAI's chat completions ({@code /v1/chat/completions}, and the legacy {@code /v1/completions}) and
	 * Responses API ({@code /v1/responses}), and the many servers compatible with them.
	 */
	OPENAI,

	/** Anthropic's messages ({@code /v1/messages}). */
	ANTHROPIC;

	/**
	 * The API of a route argument, case-insensitive.
	 * @throws IllegalArgumentException naming the allowed values
	 */
	public static LlmApi of(String name) {
		for (LlmApi api : values()) {
			if (api.name().equalsIgnoreCase(name.trim())) {
				return api;
			}
		}
		throw new IllegalArgumentException(
				"llm: '" + name + "' is not an API this gateway meters; allowed: openai, anthropic");
	}

	/** The name routes use. */
	public String routeName() {
		return name().toLowerCase(Locale.ROOT);
	}

}
