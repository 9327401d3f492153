package io.windowlimiter.core.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One limit of a plan, as text: it is checked like a route's limit, with the same messages. It has every
 * property of a route's limit ({@code RouteArgs.limitProperties()}): Boot drops one it lacks without a word.
 */
public class PlanLimitProperties {

	/** fixed-window, sliding-log, sliding-window-counter (the default) or token-bucket. */
	private String algorithm;

	/** Requests per window, a whole number from 1. */
	private String limit;

	/** The window: whole milliseconds from 1ms to 366d, such as 500ms, 10s, 1m, 1h or 1d. */
	private String window;

	/** ring (the default) or sorted-set, only with sliding-log. */
	private String logStorage;

	/** Requests allowed at once from a full bucket, only with token-bucket; the limit by default. */
	private String burst;

	/** The policy's name, shown to clients; {@code <plan>-<i>}, or the scope's name, by default. */
	private String name;

	/** The scope whose counters this limit shares with every route naming it; none by default. */
	private String scope;

	/** day, week or month: a quota that resets at the local calendar edge instead of a rolling window. */
	private String calendar;

	/** The IANA time zone of a calendar quota's edges; UTC by default. */
	private String timeZone;

	/** The first day of a calendar week (monday to sunday); monday by default. */
	private String weekStart;

	/** How long a client that runs past this limit is refused, whatever the window; none by default. */
	private String blockFor;

	/**
	 * What the limit counts: requests (the default) or tokens, the tokens of LLM calls, counted on routes
	 * that meter them (llm) and left out elsewhere.
	 */
	private String unit;

	/**
	 * The models whose calls the limit counts, on routes that meter LLM calls (llm): a model's name as the
	 * request body names it, or a pattern where * stands for any run of characters (gpt-4o*); every call when
	 * absent.
	 */
	private String model;

	Map<String, String> arguments() {
		Map<String, String> arguments = new LinkedHashMap<>();
		String[][] all = { { "algorithm", this.algorithm }, { "limit", this.limit }, { "window", this.window },
				{ "log-storage", this.logStorage }, { "burst", this.burst }, { "name", this.name },
				{ "scope", this.scope }, { "calendar", this.calendar }, { "time-zone", this.timeZone },
				{ "week-start", this.weekStart }, { "block-for", this.blockFor }, { "unit", this.unit }, { "model", this.model } };
		for (String[] pair : all) {
			if (pair[1] != null) {
				arguments.put(pair[0], pair[1]);
			}
		}
		return arguments;
	}

	public String getAlgorithm() {
		return this.algorithm;
	}

	public void setAlgorithm(String algorithm) {
		this.algorithm = algorithm;
	}

	public String getLimit() {
		return this.limit;
	}

	public void setLimit(String limit) {
		this.limit = limit;
	}

	public String getWindow() {
		return this.window;
	}

	public void setWindow(String window) {
		this.window = window;
	}

	public String getLogStorage() {
		return this.logStorage;
	}

	public void setLogStorage(String logStorage) {
		this.logStorage = logStorage;
	}

	public String getBurst() {
		return this.burst;
	}

	public void setBurst(String burst) {
		this.burst = burst;
	}

	public String getName() {
		return this.name;
	}

	public void setName(String name) {
		this.name = name;
	}

	public String getScope() {
		return this.scope;
	}

	public void setScope(String scope) {
		this.scope = scope;
	}

	public String getCalendar() {
		return this.calendar;
	}

	public void setCalendar(String calendar) {
		this.calendar = calendar;
	}

	public String getTimeZone() {
		return this.timeZone;
	}

	public void setTimeZone(String timeZone) {
		this.timeZone = timeZone;
	}

	public String getWeekStart() {
		return this.weekStart;
	}

	public void setWeekStart(String weekStart) {
		this.weekStart = weekStart;
	}

	public String getBlockFor() {
		return this.blockFor;
	}

	public void setBlockFor(String blockFor) {
		this.blockFor = blockFor;
	}

	public String getUnit() {
		return this.unit;
	}

	public void setUnit(String unit) {
		this.unit = unit;
	}

	public String getModel() {
		return this.model;
	}

	public void setModel(String model) {
		this.model = model;
	}

}
