package io.windowlimiter.metering;

/**
 * A model as a limit or a price names it: a model's name, or a pattern where each {@code *} stands for any run of
 * characters ({@code gpt-4o*}, {@code claude-*-4*}). Compared as written, case included: the upstream decides
 * what a model's name means, the gateway does not guess.
 */
public final class ModelPattern {

	private ModelPattern() {
	}

	/**
	 * Whether {@code model} matches {@code pattern}: one pass with one point to resume from after the last
	 * {@code *}, so at most pattern length times model length steps (a model is at most
	 * {@value LlmRequest#MAX_MODEL_BYTES} bytes).
	 */
	public static boolean matches(String pattern, String model) {
		int p = 0;
		int m = 0;
		int star = -1;
		int resume = 0;
		while (m < model.length()) {
			if (p < pattern.length() && pattern.charAt(p) == '*') {
				star = p++;
				resume = m;
			}
			else if (p < pattern.length() && pattern.charAt(p) == model.charAt(m)) {
				p++;
				m++;
			}
			else if (star >= 0) {
				p = star + 1;
				m = ++resume;
			}
			else {
				return false;
			}
		}
		while (p < pattern.length() && pattern.charAt(p) == '*') {
			p++;
		}
		return p == pattern.length();
	}

}
