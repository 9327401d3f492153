package io.windowlimiter.metering;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import org.jspecify.annotations.Nullable;

/**
 * What LLM calls cost in money, from {@code window-rate-limiter.llm-prices}: per model, USD per million tokens
 * of input, output, cached input (OpenAI), cache reads and cache writes (Anthropic). Counted exactly, in whole
 * micro-dollars: a price is held as micro-dollars per million tokens (so at most six decimals of a dollar per
 * million: {@code 2.50} is 2,500,000), and a call's price is the sum of its figures times their prices, divided
 * by a million and rounded up to a whole micro-dollar. No floating point anywhere, in Java or in Redis.
 * <p>
 * A model is priced by its own entry, else by the most specific pattern that matches it ({@code *} for any run
 * of characters; the one with the most other characters wins, the first listed on a tie), else by the entry
 * {@value #DEFAULT}; a model none of them prices has no price.
 */
public final class LlmPrices {

	/** The entry pricing every model no other entry prices. */
	public static final String DEFAULT = "default";

	/** The prices of one entry's fields, as configured. */
	public static final Set<String> FIELDS = Set.of("input", "output", "cached-input", "cache-read", "cache-write");

	/** No table: every model is unpriced. */
	public static final LlmPrices NONE = new LlmPrices(Map.of());

	private static final BigDecimal MILLION = BigDecimal.valueOf(1_000_000);

	/** The most a price may be: $1,000,000 per million tokens, far above any model's. */
	private static final BigDecimal MOST = MILLION;

	/**
	 * One model's prices, each in micro-dollars per million tokens.
	 * @param cachedInput OpenAI's price of the input tokens read from its cache (which its {@code prompt_tokens}
	 * include); the input price when not configured
	 * @param cacheRead Anthropic's price of {@code cache_read_input_tokens}; the input price when not configured
	 * @param cacheWrite Anthropic's price of {@code cache_creation_input_tokens}; the input price when not
	 * configured
	 * @param entry the table's entry it is (a model, a pattern or {@value #DEFAULT}): the {@code model} tag of
	 * {@code gateway.ratelimit.llm.spend}, configured and so bounded whatever models clients name
	 */
	public record Price(long input, long output, long cachedInput, long cacheRead, long cacheWrite, String entry) {

		/** A price of no table entry (tests, arithmetic). */
		public Price(long input, long output, long cachedInput, long cacheRead, long cacheWrite) {
			this(input, output, cachedInput, cacheRead, cacheWrite, DEFAULT);
		}

		/**
		 * The price of a call in whole micro-dollars, rounded up; {@link Long#MAX_VALUE} when that is more than a
		 * long holds. Reasoning tokens are output tokens (both providers count them in their output figure).
		 * @param inputTokens input tokens at the input price (for OpenAI: its prompt tokens less the cached ones)
		 * @param cachedInputTokens OpenAI's cached prompt tokens
		 * @param outputTokens output tokens, reasoning included
		 * @param cacheReadTokens Anthropic's cache reads
		 * @param cacheWriteTokens Anthropic's cache writes
		 */
		public long microDollars(long inputTokens, long cachedInputTokens, long outputTokens, long cacheReadTokens,
				long cacheWriteTokens) {
			try {
				long total = Math.addExact(Math.addExact(Math.multiplyExact(inputTokens, this.input),
						Math.multiplyExact(cachedInputTokens, this.cachedInput)),
						Math.addExact(Math.multiplyExact(outputTokens, this.output),
								Math.addExact(Math.multiplyExact(cacheReadTokens, this.cacheRead),
										Math.multiplyExact(cacheWriteTokens, this.cacheWrite))));
				// micro-dollars per million tokens, times tokens: a millionth of a micro-dollar each, rounded up
				return (total == 0) ? 0 : (total - 1) / 1_000_000 + 1;
			}
			catch (ArithmeticException ex) {
				return Long.MAX_VALUE;
			}
		}

	}

	/** Thrown for a table start-up refuses, naming the property and what is allowed. */
	public static final class InvalidPriceException extends IllegalArgumentException {

		private final String property;

		private final String found;

		private final String allowed;

		InvalidPriceException(String property, String what, String allowed) {
			super(PREFIX + property + " " + what + "; allowed: " + allowed);
			this.property = PREFIX + property;
			this.found = what;
			this.allowed = allowed;
		}

		/** What was found, as {@code is '2,50'}. */
		public String found() {
			return this.found;
		}

		public String property() {
			return this.property;
		}

		public String allowed() {
			return this.allowed;
		}

	}

	/** Where the table is configured. */
	public static final String PREFIX = "window-rate-limiter.llm-prices.";

	private final Map<String, Price> exact;

	private final Map<String, Price> patterns;

	private final @Nullable Price fallback;

	private LlmPrices(Map<String, Price> prices) {
		Map<String, Price> exact = new LinkedHashMap<>();
		Map<String, Price> patterns = new LinkedHashMap<>();
		prices.forEach((model, price) -> {
			if (!model.equals(DEFAULT)) {
				(model.indexOf('*') >= 0 ? patterns : exact).put(model, price);
			}
		});
		this.exact = Map.copyOf(exact);
		this.patterns = patterns;
		this.fallback = prices.get(DEFAULT);
	}

	/**
	 * The table as configured: per model (or pattern, or {@value #DEFAULT}), its prices by field ({@link #FIELDS}),
	 * each a decimal number of US dollars per million tokens, from 0, with at most six decimals.
	 * @throws InvalidPriceException naming the first property that is not so
	 */
	public static LlmPrices of(Map<String, ? extends Map<String, ?>> table) {
		Map<String, Price> prices = new LinkedHashMap<>();
		table.forEach((model, fields) -> {
			if (model.isEmpty() || !model.chars().allMatch(c -> c > ' ' && c < 0x7f)) {
				throw new InvalidPriceException(model, "is not a model",
						"a model's name, a pattern with * (gpt-4o*) or default; printable ASCII without spaces (in YAML "
								+ "a name with dots or * in brackets: \"[gpt-4.1]\", \"[gpt-4o*]\")");
			}
			for (String field : fields.keySet()) {
				if (!FIELDS.contains(field)) {
					throw new InvalidPriceException(model + "." + field, "is no price",
							"input, output, cached-input, cache-read, cache-write (USD per million tokens); a model's "
									+ "name with dots or * goes in brackets, in YAML \"[gpt-4.1]\": { input: 2.00, ... }, "
									+ "else the dots split it and a * is dropped");
				}
			}
			Long input = microDollarsPerMillion(model, "input", fields.get("input"));
			Long output = microDollarsPerMillion(model, "output", fields.get("output"));
			if (input == null || output == null) {
				throw new InvalidPriceException(model + "." + ((input == null) ? "input" : "output"), "is missing",
						"input and output prices for every model, in USD per million tokens (e.g. { input: 2.50, output: "
								+ "10.00 })");
			}
			Long cached = microDollarsPerMillion(model, "cached-input", fields.get("cached-input"));
			Long read = microDollarsPerMillion(model, "cache-read", fields.get("cache-read"));
			Long write = microDollarsPerMillion(model, "cache-write", fields.get("cache-write"));
			prices.put(model, new Price(input, output, (cached != null) ? cached : input, (read != null) ? read : input,
					(write != null) ? write : input, model));
		});
		return new LlmPrices(prices);
	}

	private static @Nullable Long microDollarsPerMillion(String model, String field, @Nullable Object value) {
		if (value == null) {
			return null;
		}
		String text = value.toString().trim();
		BigDecimal dollars;
		try {
			dollars = new BigDecimal(text);
		}
		catch (NumberFormatException ex) {
			dollars = null;
		}
		if (dollars == null || dollars.signum() < 0 || dollars.compareTo(MOST) > 0
				|| dollars.stripTrailingZeros().scale() > 6) {
			throw new InvalidPriceException(model + "." + field, "is '" + text + "'",
					"US dollars per million tokens, from 0 to 1000000, with at most six decimals (2.50, 0.075)");
		}
		return dollars.multiply(MILLION).setScale(0, RoundingMode.UNNECESSARY).longValueExact();
	}

	/**
	 * The table as bound, for the start-up log: each entry (model, pattern, default) with its prices in dollars per
	 * million tokens. So an operator sees a pattern written without brackets, whose {@code *} the binder dropped
	 * ({@code gpt-4o} where {@code gpt-4o*} was meant).
	 */
	public String describe() {
		StringBuilder text = new StringBuilder();
		Map<String, Price> all = new LinkedHashMap<>(this.exact);
		all.putAll(this.patterns);
		if (this.fallback != null) {
			all.put(DEFAULT, this.fallback);
		}
		all.forEach((entry, price) -> text.append((text.length() > 0) ? "; " : "").append(entry)
			.append(": input ").append(dollars(price.input()))
			.append(", output ").append(dollars(price.output()))
			.append(", cached-input ").append(dollars(price.cachedInput()))
			.append(", cache-read ").append(dollars(price.cacheRead()))
			.append(", cache-write ").append(dollars(price.cacheWrite())));
		return text.toString();
	}

	/** Whether the table prices any model. */
	public boolean isEmpty() {
		return this.exact.isEmpty() && this.patterns.isEmpty() && this.fallback == null;
	}

	/**
	 * The price of {@code model}'s calls: its own entry, else the most specific pattern matching it, else
	 * {@value #DEFAULT}'s; null when none prices it (or the call names no model and there is no default).
	 */
	public @Nullable Price priceOf(@Nullable String model) {
		if (model != null) {
			Price own = this.exact.get(model);
			if (own != null) {
				return own;
			}
			Price best = null;
			int bestLiterals = -1;
			for (Map.Entry<String, Price> entry : this.patterns.entrySet()) {
				String pattern = entry.getKey();
				int literals = pattern.length() - (int) pattern.chars().filter(c -> c == '*').count();
				if (literals > bestLiterals && ModelPattern.matches(pattern, model)) {
					best = entry.getValue();
					bestLiterals = literals;
				}
			}
			if (best != null) {
				return best;
			}
		}
		return this.fallback;
	}

	/**
	 * The price of a call's estimate: its prompt at the input price (no cache assumed: the most it can cost),
	 * its output at the output price; whole micro-dollars, rounded up.
	 */
	public static long estimateMicroDollars(Price price, long promptTokens, long outputTokens) {
		return price.microDollars(promptTokens, 0, outputTokens, 0, 0);
	}

	/**
	 * A decimal amount of US dollars as whole micro-dollars, exactly ({@code 5.00} is 5,000,000); for a
	 * {@code unit: usd} limit.
	 * @throws IllegalArgumentException for one that is not a number of at most six decimals, above 0
	 */
	public static long microDollars(String dollars) {
		BigDecimal amount = new BigDecimal(dollars.trim());
		if (amount.signum() <= 0 || amount.stripTrailingZeros().scale() > 6) {
			throw new IllegalArgumentException("not an amount above 0 with at most six decimals: " + dollars);
		}
		return amount.multiply(MILLION).setScale(0, RoundingMode.UNNECESSARY).longValueExact();
	}

	/**
	 * Whole micro-dollars as dollars for a human: {@code 15000} is {@code 0.015}, {@code 5000000} is {@code 5}.
	 */
	public static String dollars(long microDollars) {
		return BigDecimal.valueOf(microDollars, 6).stripTrailingZeros().toPlainString();
	}

}
