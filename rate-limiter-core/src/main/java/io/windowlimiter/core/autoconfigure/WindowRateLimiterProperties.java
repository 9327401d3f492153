package io.windowlimiter.core.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.HeldRequests;
import io.windowlimiter.core.access.ClientList;
import io.windowlimiter.core.access.RouteLists;
import io.windowlimiter.core.key.ApiKeys;
import io.windowlimiter.core.key.IpRange;
import io.windowlimiter.core.policy.InvalidRouteConfigurationException;
import io.windowlimiter.metering.LlmPrices;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.NestedConfigurationProperty;
import org.springframework.validation.annotation.Validated;

/**
 * Global settings of the window rate limiter, and the plans routes may use. Limits themselves are per
 * route, in the {@code RequestRateLimiter} filter's {@code window-rate-limiter.*} arguments, or per plan.
 * The settings directly under {@code window-rate-limiter} are here; each group below it has a class of its
 * own: {@link HeaderProperties}, {@link ProblemDetailsProperties}, {@link PlanProperties} (and
 * {@link PlanLimitProperties}), {@link AssignmentProperties}, {@link LlmProperties} and
 * {@link NearLimitProperties}.
 */
@ConfigurationProperties(WindowRateLimiterProperties.PREFIX)
@Validated
public class WindowRateLimiterProperties {

	public static final String PREFIX = "window-rate-limiter";

	/** Whether to register the window rate limiter and its key resolvers. */
	private boolean enabled = true;

	/**
	 * Whether the window rate limiter is the default of the {@code RequestRateLimiter} filter, for
	 * routes that name no {@code rate-limiter}. Off (the default), such routes keep the gateway's own
	 * {@code redisRateLimiter} and routes use this one by name: {@code rate-limiter: "#{@windowRateLimiter}"}.
	 * On, the window rate limiter is registered {@code @Primary}, so a limiter of your own must not be.
	 */
	private boolean defaultLimiter = false;

	/** The header whose value the {@code headerKeyResolver} bean uses as the client key. */
	private String keyHeader = "X-API-Key";

	/**
	 * The secret that client keys which are credentials (the {@code apiKeyResolver}'s, the
	 * {@code headerKeyResolver}'s when key-header is one of credential-headers, a route's with credential-keys:
	 * true) are hashed with (HMAC-SHA-256) before anything keeps or shows them: Redis key names, the ratelimits
	 * endpoint, logs. At least 16 characters, random (openssl rand -base64 32), the same on every instance.
	 * Unset, they are hashed with plain SHA-256, which shows nothing in clear but can be checked against
	 * guessed keys (a warning says so at start-up).
	 */
	private String clientKeySecret;

	/**
	 * The headers whose values are credentials: the {@code headerKeyResolver} bean hashes its keys when
	 * key-header is one of them (matched whatever the case). Remove X-API-Key to keep such keys in clear.
	 */
	private List<String> credentialHeaders = new ArrayList<>(ApiKeys.CREDENTIAL_HEADERS);

	/**
	 * The proxies in front of the gateway whose X-Forwarded-For entries the {@code clientIpKeyResolver}
	 * bean believes: IP addresses or CIDR ranges, such as 10.0.0.5, 10.0.0.0/8 or 2001:db8::/32. Empty
	 * (the default) trusts none, and the TCP peer is the client.
	 */
	private List<IpRange> trustedProxies = new ArrayList<>();

	/**
	 * The most X-Forwarded-For entries the {@code clientIpKeyResolver} bean reads from the right, however
	 * many of them are trusted proxies; unset reads until the first untrusted one. Needs trusted-proxies.
	 */
	@Min(0)
	private Integer trustedProxyHops;

	/**
	 * How many leading bits of an IPv6 client's address the {@code clientIpKeyResolver} bean keys by,
	 * 0 .. 128. One host is usually handed a whole /64; 128 keys each address.
	 */
	@Min(0)
	@Max(128)
	private int ipv6PrefixLength = 64;

	/**
	 * The longest a decision waits for Redis even while Redis answers other decisions (say one Redis
	 * Cluster node hangs); past it the route's fail-mode answers. It bounds each answer in all: the decisions of
	 * every limiter filter of a request and a settle made before its response share it. At most 30 s.
	 */
	private Duration redisTimeout = Duration.ofMillis(600);

	/** The longest {@link #redisTimeout} allowed. */
	private static final Duration MAX_REDIS_TIMEOUT = Duration.ofSeconds(30);

	/**
	 * How long Redis may answer nothing at all while decisions wait on it before they are given up and
	 * the route's fail-mode answers; until Redis answers again, decisions then fail at once but for one
	 * trial at a time. A busy Redis keeps answering, so this never fires on a healthy one.
	 */
	private Duration redisStallTimeout = Duration.ofMillis(400);

	/**
	 * The most decisions waiting at once on one Redis node (the standalone Redis, or each master of a
	 * cluster) from this instance; beyond it a decision gets the route's fail-mode at once, with nothing sent
	 * (counted by {@code gateway.ratelimit.redis.shed}). This bounds the memory held for pending decisions and
	 * what Redis runs after an outage, and a frozen master cannot take the others' room. A healthy Redis keeps
	 * far fewer in flight (requests a second times the round trip).
	 */
	@Min(1)
	private int redisMaxInFlight = 2_000;

	/** Which rate-limit headers responses carry, under which names. */
	@NestedConfigurationProperty
	private final HeaderProperties headers = new HeaderProperties();

	/** RFC 9457 problem details on refused requests. */
	@NestedConfigurationProperty
	private final ProblemDetailsProperties problemDetails = new ProblemDetailsProperties();

	/**
	 * Fail-mode local: how many counters this instance holds at most (one per route, client and limit: a
	 * window, or a calendar quota's current period; and a client's block on a route).
	 */
	private long localMaxClients = 100_000;

	/**
	 * How many denied clients this instance remembers, to answer them without a Redis call until their
	 * Retry-After. 0 turns the deny cache off.
	 */
	private long denyCacheMaxClients = 100_000;

	/**
	 * How many requests of routes with a {@code max-delay} this instance holds at once; past it a request
	 * is decided at once (429 unless its limits take it now). 0 holds none.
	 */
	@Min(0)
	private int maxDelayed = HeldRequests.DEFAULT_MAX;

	/**
	 * Whether to turn on Lettuce's Redis Cluster topology refresh (adaptive, and every 30 s), which
	 * Boot leaves off: without it a crashed master's clients are not decided again until a restart.
	 */
	private boolean clusterTopologyRefresh = true;

	/**
	 * Whether Lettuce's command observations (where Spring Boot sets them up) include the limiter's own scripts:
	 * off by default, as each costs the gateway about 4 us of CPU per decision; the limiter times them itself
	 * ({@code gateway.ratelimit.redis}).
	 */
	private boolean observeScripts;

	/**
	 * The shortest time between two log lines about failed decisions, about failed reloads of plan
	 * assignments, and about clients naming an undeclared plan.
	 */
	private Duration failureLogInterval = Duration.ofSeconds(10);

	/**
	 * Plans by name, declared once for all routes: each a list of limits with the properties of a route's
	 * {@code limits[i]}. A route uses them with {@code window-rate-limiter.plan: <its default plan>}; a
	 * client's plan then comes from an assignment made at run time, the request (plan-header or a
	 * PlanResolver bean), or else the route's default.
	 */
	private Map<String, PlanProperties> plans = new LinkedHashMap<>();

	/**
	 * The request header a client's plan is read from, on routes that use plans, as the route's filters
	 * before RequestRateLimiter left the request. Any client can send it: start-up refuses it unless
	 * plan-header-trusted states who writes it. Unset (the default), no header is read.
	 */
	private String planHeader;

	/**
	 * States that no client can choose the plan-header's value: a proxy in front of every path to this
	 * gateway overwrites it, or a filter of yours removes what the client sent (RemoveRequestHeader in
	 * default-filters or in the route's filters before RequestRateLimiter) and sets it from something
	 * verified. Required with plan-header.
	 */
	private boolean planHeaderTrusted;

	/**
	 * The claim of an authenticated principal's token (a JWT's, say) that names its plan, read when Spring
	 * Security's OAuth2 support is on the class path. Unset (the default), no claim is read.
	 */
	private String planClaim;

	/**
	 * The prefix of an authenticated principal's authority that names its plan, read when Spring Security
	 * is on the class path: with PLAN_, the authority PLAN_pro puts the client on plan pro.
	 */
	private String planAuthorityPrefix = "PLAN_";

	/** Plans and overrides assigned to clients at run time. */
	@NestedConfigurationProperty
	private final AssignmentProperties assignments = new AssignmentProperties();

	/** Settings of LLM routes ({@code WindowRateLimit} with {@code llm}) shared by all of them. */
	@NestedConfigurationProperty
	private final LlmProperties llm = new LlmProperties();

	/**
	 * What LLM calls cost, for the limits counting money ({@code unit: usd}): per model (a name, a pattern with
	 * {@code *}, or {@code default}), US dollars per million tokens of {@code input}, {@code output},
	 * {@code cached-input} (OpenAI), {@code cache-read} and {@code cache-write} (Anthropic). A name with dots or
	 * {@code *} goes in brackets in YAML ({@code "[gpt-4.1]"}), as every map key with them does.
	 */
	private Map<String, Map<String, String>> llmPrices = new LinkedHashMap<>();

	public LlmProperties getLlm() {
		return this.llm;
	}

	public Map<String, Map<String, String>> getLlmPrices() {
		return this.llmPrices;
	}

	public void setLlmPrices(Map<String, Map<String, String>> llmPrices) {
		this.llmPrices = llmPrices;
	}

	/**
	 * The price table as configured.
	 * @throws InvalidRouteConfigurationException naming the first property that is wrong, and what is allowed
	 */
	public LlmPrices prices() {
		try {
			return LlmPrices.of(this.llmPrices);
		}
		catch (LlmPrices.InvalidPriceException ex) {
			throw new InvalidRouteConfigurationException("price table", "window-rate-limiter.llm-prices",
					ex.property(), ex.found(), ex.allowed());
		}
	}

	public Map<String, PlanProperties> getPlans() {
		return this.plans;
	}

	public void setPlans(Map<String, PlanProperties> plans) {
		this.plans = plans;
	}

	/** Each plan's limits as route arguments, {@code limits[i].limit} and so on, for checking like a route's. */
	public Map<String, Map<String, String>> planArguments() {
		Map<String, Map<String, String>> arguments = new LinkedHashMap<>();
		this.plans.forEach((name, plan) -> arguments.put(name, plan.arguments()));
		return arguments;
	}

	public String getPlanClaim() {
		return this.planClaim;
	}

	public void setPlanClaim(String planClaim) {
		this.planClaim = planClaim;
	}

	public String getPlanAuthorityPrefix() {
		return this.planAuthorityPrefix;
	}

	public void setPlanAuthorityPrefix(String planAuthorityPrefix) {
		this.planAuthorityPrefix = planAuthorityPrefix;
	}

	public boolean isPlanHeaderTrusted() {
		return this.planHeaderTrusted;
	}

	public void setPlanHeaderTrusted(boolean planHeaderTrusted) {
		this.planHeaderTrusted = planHeaderTrusted;
	}

	public String getPlanHeader() {
		return this.planHeader;
	}

	public void setPlanHeader(String planHeader) {
		this.planHeader = planHeader;
	}

	public AssignmentProperties getAssignments() {
		return this.assignments;
	}

	public Duration getRedisTimeout() {
		return this.redisTimeout;
	}

	public void setRedisTimeout(Duration redisTimeout) {
		// a settle may be sent again (Lettuce, after a reconnect) until the guard gives it up: its marker in Redis
		// lives a minute (settle.lua), which this keeps well beyond that
		if (redisTimeout.compareTo(MAX_REDIS_TIMEOUT) > 0) {
			throw new IllegalArgumentException(PREFIX + ".redis-timeout is at most " + MAX_REDIS_TIMEOUT.toSeconds()
					+ "s, was " + redisTimeout + ": a decision waits no longer than this for Redis");
		}
		this.redisTimeout = redisTimeout;
	}

	public Duration getRedisStallTimeout() {
		return this.redisStallTimeout;
	}

	public void setRedisStallTimeout(Duration redisStallTimeout) {
		this.redisStallTimeout = redisStallTimeout;
	}

	public int getRedisMaxInFlight() {
		return this.redisMaxInFlight;
	}

	public void setRedisMaxInFlight(int redisMaxInFlight) {
		this.redisMaxInFlight = redisMaxInFlight;
	}

	public HeaderProperties getHeaders() {
		return this.headers;
	}

	public ProblemDetailsProperties getProblemDetails() {
		return this.problemDetails;
	}

	public long getLocalMaxClients() {
		return this.localMaxClients;
	}

	public void setLocalMaxClients(long localMaxClients) {
		this.localMaxClients = localMaxClients;
	}

	public long getDenyCacheMaxClients() {
		return this.denyCacheMaxClients;
	}

	public void setDenyCacheMaxClients(long denyCacheMaxClients) {
		this.denyCacheMaxClients = denyCacheMaxClients;
	}

	public int getMaxDelayed() {
		return this.maxDelayed;
	}

	public void setMaxDelayed(int maxDelayed) {
		this.maxDelayed = maxDelayed;
	}

	public boolean isObserveScripts() {
		return this.observeScripts;
	}

	public void setObserveScripts(boolean observeScripts) {
		this.observeScripts = observeScripts;
	}

	public boolean isClusterTopologyRefresh() {
		return this.clusterTopologyRefresh;
	}

	public void setClusterTopologyRefresh(boolean clusterTopologyRefresh) {
		this.clusterTopologyRefresh = clusterTopologyRefresh;
	}

	public Duration getFailureLogInterval() {
		return this.failureLogInterval;
	}

	public void setFailureLogInterval(Duration failureLogInterval) {
		this.failureLogInterval = failureLogInterval;
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public boolean isDefaultLimiter() {
		return this.defaultLimiter;
	}

	public void setDefaultLimiter(boolean defaultLimiter) {
		this.defaultLimiter = defaultLimiter;
	}

	public String getKeyHeader() {
		return this.keyHeader;
	}

	public String getClientKeySecret() {
		return this.clientKeySecret;
	}

	public void setClientKeySecret(String clientKeySecret) {
		this.clientKeySecret = clientKeySecret;
	}

	public List<String> getCredentialHeaders() {
		return this.credentialHeaders;
	}

	public void setCredentialHeaders(List<String> credentialHeaders) {
		this.credentialHeaders = credentialHeaders;
	}

	/** Whether the {@code headerKeyResolver}'s header is one of the credential headers. */
	public boolean keyHeaderIsCredential() {
		return ApiKeys.isCredentialHeader(this.keyHeader, this.credentialHeaders);
	}

	public void setKeyHeader(String keyHeader) {
		this.keyHeader = keyHeader;
	}

	public List<IpRange> getTrustedProxies() {
		return this.trustedProxies;
	}

	public void setTrustedProxies(List<IpRange> trustedProxies) {
		this.trustedProxies = trustedProxies;
	}

	public Integer getTrustedProxyHops() {
		return this.trustedProxyHops;
	}

	public void setTrustedProxyHops(Integer trustedProxyHops) {
		this.trustedProxyHops = trustedProxyHops;
	}

	public int getIpv6PrefixLength() {
		return this.ipv6PrefixLength;
	}

	public void setIpv6PrefixLength(int ipv6PrefixLength) {
		this.ipv6PrefixLength = ipv6PrefixLength;
	}

	// Allow and deny lists, and near-limit: kept together here (issue 26), apart from the older settings.

	/**
	 * Clients never limited on any route of this limiter, counted as {@code exempt}: client keys as the
	 * route's key resolver gives them, and, for routes keyed by the clientIpKeyResolver, IP addresses and
	 * CIDR ranges such as 10.0.0.0/8 or 2001:db8::/32. A route's own window-rate-limiter.deny overrides it.
	 */
	private List<String> allow = new ArrayList<>();

	/**
	 * Clients always refused with 403 on every route of this limiter, without a Redis call; written as
	 * allow's entries. A route's own window-rate-limiter.allow overrides it.
	 */
	private List<String> deny = new ArrayList<>();

	/** Counting (and logging) allowed requests that leave their client near a limit. */
	@NestedConfigurationProperty
	private final NearLimitProperties nearLimit = new NearLimitProperties();

	public List<String> getAllow() {
		return this.allow;
	}

	public void setAllow(List<String> allow) {
		this.allow = allow;
	}

	public List<String> getDeny() {
		return this.deny;
	}

	public void setDeny(List<String> deny) {
		this.deny = deny;
	}

	public NearLimitProperties getNearLimit() {
		return this.nearLimit;
	}

	/**
	 * The gateway's lists, read from {@link #getAllow()} and {@link #getDeny()}.
	 * @throws IllegalStateException naming the property, the bad entry and what is allowed
	 */
	public RouteLists gatewayLists() {
		ClientList allow = list("allow", this.allow);
		ClientList deny = list("deny", this.deny);
		String both = allow.sharedWith(deny);
		if (both != null) {
			throw new IllegalStateException(PREFIX + ".deny names '" + both + "', which " + PREFIX
					+ ".allow names too; allowed: each client in one list at most");
		}
		return new RouteLists(allow, deny);
	}

	private static ClientList list(String name, List<String> entries) {
		try {
			return ClientList.of(entries);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalStateException("Invalid " + PREFIX + "." + name + ": " + ex.getMessage() + " (" + PREFIX + "."
					+ name + "[" + ex.getMessage().replaceAll("^entry (\\d+).*", "$1") + "]); allowed: " + ClientList.ALLOWED,
					ex);
		}
	}

}
