package io.windowlimiter.core.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A plan: limits decided together, as a route's own would be. */
public class PlanProperties {

	/** The plan's limits, decided together, all or nothing. */
	private List<PlanLimitProperties> limits = new ArrayList<>();

	public List<PlanLimitProperties> getLimits() {
		return this.limits;
	}

	public void setLimits(List<PlanLimitProperties> limits) {
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
