package io.windowlimiter.mvc;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.CountStatuses;
import io.windowlimiter.core.LlmSettings;
import io.windowlimiter.core.RefusalStatus;
import io.windowlimiter.core.ResponseCost;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.core.policy.RouteArgs;
import org.jspecify.annotations.Nullable;

/**
 * The arguments of one {@code WindowRateLimit} filter on a Server MVC route: the same limiter arguments
 * as on the WebFlux gateway, without the {@code window-rate-limiter.} prefix, plus which key resolver
 * (a bean name) counts the request. Bound from a route's YAML {@code args}, or set in the Java DSL:
 * {@code windowRateLimit(c -> c.setKeyResolver("clientIpKeyResolver").setLimit("5").setWindow("10s"))}.
 *
 * <p>The limiter arguments are kept as written and checked by {@link RouteArgs}, so a mistake gets the
 * same message on both gateways; so are an LLM route's ({@code llm}, {@code max-body-bytes}, a limit's
 * {@code unit}), by {@link LlmSettings}.
 */
public class WindowRateLimitConfig {

	/** The arguments that read the request or answer it, not the limits; {@link RouteArgs} never sees them. */
	public static final List<String> ADAPTER_ARGUMENTS = List.of("key-resolver", "deny-empty-key", "cost-from-header",
			"count-statuses", "cost-from-response-header", "status-code", "empty-key-status", "llm", "max-body-bytes");

	/** How a route built in the Java DSL is named in messages before its id is known. */
	static final String DSL_ROUTE = "(WindowRateLimit)";

	private static final String UNIT = "unit";

	private final Map<String, String> route = new LinkedHashMap<>();

	private List<Map<String, String>> limits = new ArrayList<>();

	private @Nullable String keyResolver;

	private boolean denyEmptyKey = true;

	private @Nullable String statusCode;

	private @Nullable String emptyKeyStatus;

	private @Nullable String costFromHeader;

	private @Nullable String countStatuses;

	private @Nullable String costFromResponseHeader;

	private @Nullable String llm;

	private @Nullable String maxBodyBytes;

	/** {@code llm} and the units read, by {@link #checkLlmArguments}; null: no LLM route. */
	private @Nullable LlmSettings llmSettings;

	/** {@code count-statuses} read, by {@link #checkResponseArguments}: the filter reads it per request. */
	private @Nullable CountStatuses statusesThatCount;

	/** {@code status-code} and {@code empty-key-status} read, by {@link #checkResponseArguments}. */
	private int refusalStatus = 429;

	private int emptyKeyRefusalStatus = 403;

	/** The limiter arguments, the limits' {@code unit} among them, prefixed as {@link RouteArgs#parse} reads them. */
	public Map<String, Object> limiterArguments() {
		Map<String, Object> args = new LinkedHashMap<>();
		this.route.forEach((name, value) -> args.put(RouteArgs.PREFIX + name, value));
		for (int i = 0; i < this.limits.size(); i++) {
			String prefix = RouteArgs.PREFIX + "limits[" + i + "].";
			this.limits.get(i).forEach((name, value) -> args.put(prefix + name, value));
		}
		return args;
	}

	/** The filter's own arguments that {@link LlmSettings#of} reads or refuses beside {@code llm}. */
	Map<String, Object> ownArguments() {
		Map<String, Object> own = new LinkedHashMap<>();
		putIfSet(own, "llm", this.llm);
		putIfSet(own, "max-body-bytes", this.maxBodyBytes);
		putIfSet(own, "cost-from-header", this.costFromHeader);
		putIfSet(own, "count-statuses", this.countStatuses);
		putIfSet(own, "cost-from-response-header", this.costFromResponseHeader);
		return own;
	}

	private static void putIfSet(Map<String, Object> args, String name, @Nullable String value) {
		if (value != null) {
			args.put(name, value);
		}
	}

	/**
	 * Reads {@code llm}, {@code max-body-bytes} and the limits' {@code unit}, once, where the filter is built,
	 * with the WebFlux filter's rules and messages (a YAML route's were checked at start-up by
	 * {@link MvcRouteCheck}, naming their whole path).
	 * @throws InvalidRouteConfigurationException naming the route, the argument and what is allowed
	 */
	void checkLlmArguments(String routeId) {
		this.llmSettings = LlmSettings.of(routeId, ownArguments(), limiterArguments());
	}

	/** The LLM settings read by {@link #checkLlmArguments}; null: the filter counts requests only. */
	@Nullable LlmSettings llmSettings() {
		return this.llmSettings;
	}

	/**
	 * Reads {@code count-statuses}, {@code status-code} and {@code empty-key-status} and checks
	 * {@code cost-from-response-header}, once, where the filter is built (a YAML route's were checked at
	 * start-up by {@link MvcRouteCheck}, naming their whole path).
	 * @throws InvalidRouteConfigurationException naming the route, the argument and what is allowed
	 */
	void checkResponseArguments(String routeId) {
		this.refusalStatus = RefusalStatus.parse(routeId, "status-code", this.statusCode, 429);
		this.emptyKeyRefusalStatus = RefusalStatus.parse(routeId, "empty-key-status", this.emptyKeyStatus, 403);
		String statuses = this.countStatuses;
		this.statusesThatCount = (statuses != null) ? CountStatuses.parse(routeId, "count-statuses", statuses) : null;
		String header = this.costFromResponseHeader;
		if (header != null) {
			this.costFromResponseHeader = ResponseCost.headerName(routeId, "cost-from-response-header", header);
		}
	}

	/** The statuses that count, as read by {@link #checkResponseArguments}; null: every response counts. */
	@Nullable CountStatuses statusesThatCount() {
		return this.statusesThatCount;
	}

	/** The status of a refusal by the limits, unless the core has its own ({@code Admission.status()}). */
	int refusalStatus() {
		return this.refusalStatus;
	}

	/** The status of a refusal of a request without a key. */
	int emptyKeyRefusalStatus() {
		return this.emptyKeyRefusalStatus;
	}

	/** Whether a request's reservation is settled once its response is known (one more Redis call). */
	boolean settlesOnResponse() {
		return this.countStatuses != null || this.costFromResponseHeader != null;
	}

	private WindowRateLimitConfig put(String name, @Nullable String value) {
		if (value == null) {
			this.route.remove(name);
		}
		else {
			this.route.put(name, value);
		}
		return this;
	}

	public @Nullable String getKeyResolver() {
		return this.keyResolver;
	}

	/** The name of a {@link io.windowlimiter.mvc.key.MvcKeyResolver} bean; {@code #{@name}} is read as {@code name}. */
	public WindowRateLimitConfig setKeyResolver(String keyResolver) {
		String name = keyResolver.strip();
		if (name.startsWith("#{@") && name.endsWith("}")) {
			// copied from a WebFlux route: Server MVC has no SpEL, the bean's name is what it meant
			name = name.substring(3, name.length() - 1);
		}
		this.keyResolver = name;
		return this;
	}

	public boolean isDenyEmptyKey() {
		return this.denyEmptyKey;
	}

	/**
	 * Whether a request without a key is refused (the default, with {@code empty-key-status}) or, when false,
	 * limited with every other keyless request of the route under one shared key ({@code ____EMPTY_KEY__}).
	 */
	public WindowRateLimitConfig setDenyEmptyKey(boolean denyEmptyKey) {
		this.denyEmptyKey = denyEmptyKey;
		return this;
	}

	public @Nullable String getStatusCode() {
		return this.statusCode;
	}

	/** The status of a refusal by the limits, 400 to 599; 429 when absent. */
	public WindowRateLimitConfig setStatusCode(String statusCode) {
		this.statusCode = statusCode;
		return this;
	}

	public @Nullable String getEmptyKeyStatus() {
		return this.emptyKeyStatus;
	}

	/** The status of a refusal of a request without a key (with {@code deny-empty-key}), 400 to 599; 403 when absent. */
	public WindowRateLimitConfig setEmptyKeyStatus(String emptyKeyStatus) {
		this.emptyKeyStatus = emptyKeyStatus;
		return this;
	}

	public @Nullable String getCostFromHeader() {
		return this.costFromHeader;
	}

	/** The request's cost is this header's whole number (absent: {@code cost}); a bad one is a 400. */
	public WindowRateLimitConfig setCostFromHeader(String costFromHeader) {
		this.costFromHeader = costFromHeader;
		return this;
	}

	public @Nullable String getCountStatuses() {
		return this.countStatuses;
	}

	/**
	 * Only responses with these statuses count, such as {@code 401,403} or {@code 4xx}; the others are
	 * refunded once the response is known. Absent: every response counts.
	 */
	public WindowRateLimitConfig setCountStatuses(String countStatuses) {
		this.countStatuses = countStatuses;
		return this;
	}

	public @Nullable String getCostFromResponseHeader() {
		return this.costFromResponseHeader;
	}

	/**
	 * A response header whose whole number (0 or more) is what the call cost: the reservation is settled to
	 * it, a refund when lower, a charge past the limit when higher; absent or unreadable: as reserved.
	 */
	public WindowRateLimitConfig setCostFromResponseHeader(String costFromResponseHeader) {
		this.costFromResponseHeader = costFromResponseHeader;
		return this;
	}

	public @Nullable String getLlm() {
		return this.llm;
	}

	/**
	 * The API an LLM route's requests speak: {@code openai} (chat completions, Responses API) or
	 * {@code anthropic} (messages). The filter reads each request body to estimate its tokens and each
	 * response's usage to settle them; needs a limit with {@code unit: tokens}.
	 */
	public WindowRateLimitConfig setLlm(String llm) {
		this.llm = llm;
		return this;
	}

	public @Nullable String getMaxBodyBytes() {
		return this.maxBodyBytes;
	}

	/** The largest request body an LLM route reads to estimate its tokens (default 4 MB); larger ones are a 413. */
	public WindowRateLimitConfig setMaxBodyBytes(String maxBodyBytes) {
		this.maxBodyBytes = maxBodyBytes;
		return this;
	}

	public List<Map<String, String>> getLimits() {
		return this.limits;
	}

	/** Several limits, each {@code limit}, {@code window} and optionally {@code algorithm}, {@code name} ... */
	public WindowRateLimitConfig setLimits(List<Map<String, String>> limits) {
		this.limits = new ArrayList<>(limits);
		return this;
	}

	public @Nullable String getAlgorithm() {
		return this.route.get("algorithm");
	}

	public WindowRateLimitConfig setAlgorithm(String algorithm) {
		return put("algorithm", algorithm);
	}

	public @Nullable String getLimit() {
		return this.route.get("limit");
	}

	public WindowRateLimitConfig setLimit(String limit) {
		return put("limit", limit);
	}

	public @Nullable String getWindow() {
		return this.route.get("window");
	}

	public WindowRateLimitConfig setWindow(String window) {
		return put("window", window);
	}

	public @Nullable String getLogStorage() {
		return this.route.get("log-storage");
	}

	public WindowRateLimitConfig setLogStorage(String logStorage) {
		return put("log-storage", logStorage);
	}

	public @Nullable String getBurst() {
		return this.route.get("burst");
	}

	public WindowRateLimitConfig setBurst(String burst) {
		return put("burst", burst);
	}

	public @Nullable String getName() {
		return this.route.get("name");
	}

	public WindowRateLimitConfig setName(String name) {
		return put("name", name);
	}

	public @Nullable String getScope() {
		return this.route.get("scope");
	}

	public WindowRateLimitConfig setScope(String scope) {
		return put("scope", scope);
	}

	public @Nullable String getPlan() {
		return this.route.get("plan");
	}

	public WindowRateLimitConfig setPlan(String plan) {
		return put("plan", plan);
	}

	public @Nullable String getCost() {
		return this.route.get("cost");
	}

	public WindowRateLimitConfig setCost(String cost) {
		return put("cost", cost);
	}

	public @Nullable String getShadow() {
		return this.route.get("shadow");
	}

	public WindowRateLimitConfig setShadow(String shadow) {
		return put("shadow", shadow);
	}

	public @Nullable String getFailMode() {
		return this.route.get("fail-mode");
	}

	public WindowRateLimitConfig setFailMode(String failMode) {
		return put("fail-mode", failMode);
	}

	public @Nullable String getInstances() {
		return this.route.get("instances");
	}

	public WindowRateLimitConfig setInstances(String instances) {
		return put("instances", instances);
	}

	public @Nullable String getCalendar() {
		return this.route.get("calendar");
	}

	/** A calendar quota: {@code day}, {@code week} or {@code month}, in {@code time-zone}, instead of a window. */
	public WindowRateLimitConfig setCalendar(String calendar) {
		return put("calendar", calendar);
	}

	public @Nullable String getTimeZone() {
		return this.route.get("time-zone");
	}

	/** The calendar quota's zone, such as {@code Europe/Paris}; UTC when absent. */
	public WindowRateLimitConfig setTimeZone(String timeZone) {
		return put("time-zone", timeZone);
	}

	public @Nullable String getWeekStart() {
		return this.route.get("week-start");
	}

	/** The day a weekly quota starts, such as {@code sunday}; Monday when absent. */
	public WindowRateLimitConfig setWeekStart(String weekStart) {
		return put("week-start", weekStart);
	}

	public @Nullable String getQuotaStatus() {
		return this.route.get("quota-status");
	}

	/** The status of a refusal by the calendar quota (400 to 499, such as 403); 429 when absent. */
	public WindowRateLimitConfig setQuotaStatus(String quotaStatus) {
		return put("quota-status", quotaStatus);
	}

	public @Nullable String getBlockFor() {
		return this.route.get("block-for");
	}

	/** A penalty: a client a limit refuses is refused this long, past the window. */
	public WindowRateLimitConfig setBlockFor(String blockFor) {
		return put("block-for", blockFor);
	}

	public @Nullable String getAllow() {
		return this.route.get("allow");
	}

	/** Client keys (for the client-IP resolver also CIDR ranges) never limited, comma separated. */
	public WindowRateLimitConfig setAllow(String allow) {
		return put("allow", allow);
	}

	public @Nullable String getDeny() {
		return this.route.get("deny");
	}

	/** Client keys (addresses, ranges) refused with 403 whatever their quota, comma separated. */
	public WindowRateLimitConfig setDeny(String deny) {
		return put("deny", deny);
	}

	public @Nullable String getCredentialKeys() {
		return this.route.get(RouteArgs.CREDENTIAL_KEYS);
	}

	/**
	 * {@code true}: the route's client keys are credentials, hashed where they enter the limiter, whatever resolver
	 * reads them (apiKeyResolver, and headerKeyResolver on a credential header, say so themselves).
	 */
	public WindowRateLimitConfig setCredentialKeys(String credentialKeys) {
		return put(RouteArgs.CREDENTIAL_KEYS, credentialKeys);
	}

	public @Nullable String getUnit() {
		return this.route.get("unit");
	}

	/** What a single limit counts: {@code requests} (the default) or {@code tokens} (needs {@code llm}). */
	public WindowRateLimitConfig setUnit(String unit) {
		return put(UNIT, unit);
	}

	public @Nullable String getModel() {
		return this.route.get("model");
	}

	/** The models a single limit counts (needs {@code llm}): a name, or a pattern with {@code *}. */
	public WindowRateLimitConfig setModel(String model) {
		return put("model", model);
	}

}
