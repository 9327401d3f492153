package io.windowlimiter.core.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.BufferedBodies;
import io.windowlimiter.core.HeldRequests;
import io.windowlimiter.core.RateLimitHeaders;
import io.windowlimiter.core.access.ClientList;
import io.windowlimiter.core.access.RouteLists;
import io.windowlimiter.core.key.ApiKeys;
import io.windowlimiter.core.key.IpRange;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;
import org.springframework.validation.annotation.Validated;

/**
 * Global settings of the window rate limiter, and the plans routes may use. Limits themselves are per
 * route, in the {@code RequestRateLimiter} filter's {@code window-rate-limiter.*} arguments, or per plan.
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
	private final Headers headers = new Headers();

	/** RFC 9457 problem details on refused requests. */
	private final ProblemDetails problemDetails = new ProblemDetails();

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
	private Map<String, Plan> plans = new LinkedHashMap<>();

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
	private final Assignments assignments = new Assignments();

	/** Settings of LLM routes ({@code WindowRateLimit} with {@code llm}) shared by all of them. */
	private final Llm llm = new Llm();

	public Llm getLlm() {
		return this.llm;
	}

	public Map<String, Plan> getPlans() {
		return this.plans;
	}

	public void setPlans(Map<String, Plan> plans) {
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

	public Assignments getAssignments() {
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

	public Headers getHeaders() {
		return this.headers;
	}

	public ProblemDetails getProblemDetails() {
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
	private final NearLimit nearLimit = new NearLimit();

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

	public NearLimit getNearLimit() {
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

	/** Allowed requests near a limit (Envoy's near_limit): counted, and optionally logged. */
	public static class NearLimit {

		/**
		 * The share of a limit from which an allowed request counts in gateway.ratelimit.near_limit: above 0,
		 * at most 1. 0.8 (Envoy's default) counts a request that leaves its client with 20% or less of a
		 * limit (of a token bucket's burst).
		 */
		private double share = io.windowlimiter.core.NearLimit.DEFAULT_SHARE;

		/**
		 * When set, at most one log line per this interval names a route, limit and client near it (a long
		 * client key shortened to a hash). Unset (the default), nothing is logged.
		 */
		private Duration logInterval;

		public double getShare() {
			return this.share;
		}

		public void setShare(double share) {
			this.share = share;
		}

		public Duration getLogInterval() {
			return this.logInterval;
		}

		public void setLogInterval(Duration logInterval) {
			this.logInterval = logInterval;
		}

	}

	/** Which rate-limit headers responses carry, under which names. */
	public static class Headers {

		/** Whether to send X-RateLimit-Limit, -Remaining and -Reset. */
		private boolean xEnabled = true;

		/** Name of the header with the limit. */
		private String limit = RateLimitHeaders.LIMIT;

		/** Name of the header with the remaining quota. */
		private String remaining = RateLimitHeaders.REMAINING;

		/** Name of the header with the seconds until quota frees. */
		private String reset = RateLimitHeaders.RESET;

		/** Whether to send the IETF draft's RateLimit-Policy and RateLimit. */
		private boolean ietfEnabled = true;

		/** Name of the header listing the policies. */
		private String policy = RateLimitHeaders.POLICY;

		/** Name of the header with the state of the policy closest to running out. */
		private String rateLimit = RateLimitHeaders.RATE_LIMIT;

		public boolean isXEnabled() {
			return this.xEnabled;
		}

		public void setXEnabled(boolean xEnabled) {
			this.xEnabled = xEnabled;
		}

		public String getLimit() {
			return this.limit;
		}

		public void setLimit(String limit) {
			this.limit = limit;
		}

		public String getRemaining() {
			return this.remaining;
		}

		public void setRemaining(String remaining) {
			this.remaining = remaining;
		}

		public String getReset() {
			return this.reset;
		}

		public void setReset(String reset) {
			this.reset = reset;
		}

		public boolean isIetfEnabled() {
			return this.ietfEnabled;
		}

		public void setIetfEnabled(boolean ietfEnabled) {
			this.ietfEnabled = ietfEnabled;
		}

		public String getPolicy() {
			return this.policy;
		}

		public void setPolicy(String policy) {
			this.policy = policy;
		}

		public String getRateLimit() {
			return this.rateLimit;
		}

		public void setRateLimit(String rateLimit) {
			this.rateLimit = rateLimit;
		}

	}

	/** A plan: limits decided together, as a route's own would be. */
	public static class Plan {

		/** The plan's limits, decided together, all or nothing. */
		private List<PlanLimit> limits = new ArrayList<>();

		public List<PlanLimit> getLimits() {
			return this.limits;
		}

		public void setLimits(List<PlanLimit> limits) {
			this.limits = limits;
		}

		Map<String, String> arguments() {
			Map<String, String> arguments = new LinkedHashMap<>();
			for (int i = 0; i < this.limits.size(); i++) {
				String prefix = "limits[" + i + "].";
				this.limits.get(i).arguments().forEach((name, value) -> arguments.put(prefix + name, value));
			}
			return arguments;
		}

	}

	/**
	 * One limit of a plan, as text: it is checked like a route's limit, with the same messages. It has every
	 * property of a route's limit ({@code RouteArgs.limitProperties()}): Boot drops one it lacks without a word.
	 */
	public static class PlanLimit {

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

		Map<String, String> arguments() {
			Map<String, String> arguments = new LinkedHashMap<>();
			String[][] all = { { "algorithm", this.algorithm }, { "limit", this.limit }, { "window", this.window },
					{ "log-storage", this.logStorage }, { "burst", this.burst }, { "name", this.name },
					{ "scope", this.scope }, { "calendar", this.calendar }, { "time-zone", this.timeZone },
					{ "week-start", this.weekStart }, { "block-for", this.blockFor }, { "unit", this.unit } };
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

	}

	/** Settings of LLM routes shared by all of them. */
	public static class Llm {

		/**
		 * The most request-body bytes this instance buffers at once to meter LLM calls, all connections and
		 * routes together: a body is read (up to its route's max-body-bytes) before its call is admitted, and a
		 * body that would take the total past this is answered 503 with Retry-After: 1 at once, nothing charged.
		 * Unset, an eighth of the JVM's largest heap (-Xmx).
		 */
		private DataSize maxBufferedBytes;

		public DataSize getMaxBufferedBytes() {
			return this.maxBufferedBytes;
		}

		public void setMaxBufferedBytes(DataSize maxBufferedBytes) {
			this.maxBufferedBytes = maxBufferedBytes;
		}

		/** The bound in bytes: as set, else the default's. */
		public long maxBufferedBytes() {
			if (this.maxBufferedBytes == null) {
				return BufferedBodies.defaultMax();
			}
			if (this.maxBufferedBytes.toBytes() < 1) {
				throw new IllegalStateException(PREFIX + ".llm.max-buffered-bytes is " + this.maxBufferedBytes
						+ "; it must be 1 byte or more (such as 64MB), or unset for an eighth of the heap");
			}
			return this.maxBufferedBytes.toBytes();
		}

	}

	/** Plans and overrides assigned to clients at run time (see PlanAssignments). */
	public static class Assignments {

		/**
		 * How often each instance asks Redis whether assignments changed (one GET); a change takes effect on
		 * every instance within this interval plus one reload.
		 */
		private Duration refreshInterval = Duration.ofMillis(250);

		/** The most assignments kept; a new one beyond it is refused. Every instance holds all of them. */
		@Min(1)
		private long maxEntries = 100_000;

		public Duration getRefreshInterval() {
			return this.refreshInterval;
		}

		public void setRefreshInterval(Duration refreshInterval) {
			this.refreshInterval = refreshInterval;
		}

		public long getMaxEntries() {
			return this.maxEntries;
		}

		public void setMaxEntries(long maxEntries) {
			this.maxEntries = maxEntries;
		}

	}

	/** RFC 9457 problem details on refused requests. */
	public static class ProblemDetails {

		/**
		 * Whether a refused request gets an application/problem+json body of the IETF rate-limit draft's
		 * quota-exceeded type, naming the violated policies.
		 */
		private boolean enabled = false;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

}
