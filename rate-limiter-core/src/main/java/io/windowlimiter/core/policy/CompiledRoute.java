package io.windowlimiter.core.policy;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.windowlimiter.core.access.RouteLists;
import org.jspecify.annotations.Nullable;

/**
 * One route as the limiter decides it: its own limits, or one compiled policy per plan when it uses
 * plans, plus the overrides met so far. Built by the {@link PolicyRegistry}.
 */
public final class CompiledRoute {

	/** Overrides compiled for this route, by their limits; bounded, as assignments come and go. */
	private static final int MAX_OVERRIDES = 10_000;

	public final RoutePolicy policy;

	/** For clients without a plan: the route's own limits, or its default plan's. */
	public final CompiledPolicy byDefault;

	/** The route's allow and deny lists ({@code window-rate-limiter.allow}, {@code .deny}). */
	public final RouteLists lists;

	/** Every scope the route names under any plan, in order: assignments made on a scope apply to it. */
	public final List<String> scopes;

	/**
	 * Whether the adapter deciding the route gives each concurrency slot back when the response ends: only then
	 * may a client's limits here count concurrency (an override's included).
	 */
	public final boolean releasesSlots;

	/**
	 * Whether the adapter deciding the route meters LLM calls ({@code llm}): only then do limits counting tokens
	 * count on it (the route's own, a plan's, an override's), and an override replaces the limits of the kinds
	 * it names rather than all of them.
	 */
	public final boolean metersTokens;

	private final Map<String, CompiledPolicy> plans;

	/** Empty for an override that does not fit the route: worked out once too. */
	private final Cache<Object, Optional<CompiledPolicy>> overrides = Caffeine.newBuilder()
		.maximumSize(MAX_OVERRIDES)
		.build();

	CompiledRoute(RoutePolicy policy, CompiledPolicy byDefault, Map<String, CompiledPolicy> plans, RouteLists lists,
			SlotRelease release, boolean metersTokens) {
		this.policy = policy;
		this.metersTokens = metersTokens;
		this.lists = lists;
		this.byDefault = byDefault;
		this.plans = Map.copyOf(plans);
		Set<String> scopes = new LinkedHashSet<>();
		for (CompiledPolicy compiled : choices()) {
			compiled.limits.stream().map(RouteLimit::scope).filter(scope -> scope != null).forEach(scopes::add);
		}
		this.scopes = List.copyOf(scopes);
		this.releasesSlots = release.releases(countsConcurrency());
	}

	/** The plan's policy on this route; null when the route has limits of its own or the plan is unknown. */
	public @Nullable CompiledPolicy plan(String name) {
		return this.plans.get(name);
	}

	/** What a client on this plan gets ({@link PolicyRegistry#OWN} for clients without one). */
	public CompiledPolicy choice(String plan) {
		CompiledPolicy compiled = this.plans.get(plan);
		return (compiled != null) ? compiled : this.byDefault;
	}

	/** Whether a client's limits here may count requests in flight (its own, or any plan's). */
	public boolean countsConcurrency() {
		return choices().stream().anyMatch(choice -> choice.concurrency.length > 0);
	}

	private List<CompiledPolicy> choices() {
		return this.plans.isEmpty() ? List.of(this.byDefault) : List.copyOf(this.plans.values());
	}

	/**
	 * @param key what the override is made of: its limits, and for one on a scope the scope and base plan
	 * @param compile the override's policy, or null when it does not fit the route
	 */
	public @Nullable CompiledPolicy override(Object key, Function<Object, @Nullable CompiledPolicy> compile) {
		return this.overrides.get(key, k -> Optional.ofNullable(compile.apply(k))).orElse(null);
	}

	/** Whether some policy of the route (its own, or any plan's) counts money ({@code unit: usd}). */
	public boolean countsMoney() {
		return this.byDefault.moneyLimits.length > 0
				|| this.plans.values().stream().anyMatch(plan -> plan.moneyLimits.length > 0);
	}

}
