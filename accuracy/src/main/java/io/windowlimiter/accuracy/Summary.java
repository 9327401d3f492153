package io.windowlimiter.accuracy;

import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * The one table of the README's "Choosing an algorithm": accuracy, memory and speed per algorithm,
 * generated with the figures so that the README copies it rather than retyping numbers.
 */
public final class Summary {

	private static final List<Algorithm> COLUMNS = List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG,
			Algorithm.SLIDING_WINDOW_COUNTER, Algorithm.TOKEN_BUCKET);

	private final Results results;

	private final StringBuilder table = new StringBuilder();

	private Summary(Results results) {
		this.results = results;
	}

	/**
	 * @param windowEdge the 59 s / 61 s trace
	 * @param edgeThenSteady the counter's worst case
	 * @param families steady, random bursts and periodic bursts, each over the traffic levels
	 * @param named steady traces at 0.5x and 1x, random and periodic bursts at 1x, and many clients
	 */
	public static String table(Results results, Trace windowEdge, Trace edgeThenSteady, List<List<Trace>> families,
			List<Trace> named, List<Footprint.Cost> costs, RunInfo info) {
		Summary summary = new Summary(results);
		StringBuilder md = summary.table;
		md.append("| measured, limit 100 per minute | fixed window | sliding log | sliding window counter ")
			.append("| token bucket (burst = limit) |\n");
		md.append("|---|--:|--:|--:|--:|\n");
		summary.row("100 requests at second 59, 100 at second 61: allowed",
				a -> String.valueOf(results.score(windowEdge.name(), a).allowed()));
		summary.row("100 at second 59.9, then 10 a second for a minute: most allowed in any 60 s",
				a -> times(results.score(edgeThenSteady.name(), a).overshoot()));
		String[] shapes = { "steady random traffic", "on/off bursts at random", "bursts in the same part of every minute" };
		for (int f = 0; f < families.size(); f++) {
			List<Trace> family = families.get(f);
			String label = (f == 0) ? String.format(Locale.ROOT, "most allowed in any 60 s, %s at %s to %s the limit",
					shapes[f], Traces.level(family.get(0).level()), Traces.level(family.get(family.size() - 1).level()))
					: "… " + shapes[f];
			summary.row(label, a -> times(summary.max(family, a, Score::overshoot)));
		}
		Trace halfSteady = named.get(0);
		Trace steady = named.get(1);
		Trace bursts = named.get(2);
		Trace periodic = named.get(3);
		Trace many = named.get(4);
		summary.row("wrongly allowed / wrongly denied, steady traffic at 0.5x the limit",
				a -> summary.wrongly(halfSteady, a));
		summary.row("… steady traffic at the limit", a -> summary.wrongly(steady, a));
		summary.row(String.format(Locale.ROOT, "… %,d clients mostly under their limits", many.clients().size()),
				a -> summary.wrongly(many, a));
		summary.row("allowed in all vs the exact log, at the limit: steady / random bursts / same part of every minute",
				a -> String.join(" / ", Report.signedPercent(results.score(steady.name(), a).allowedVsExact()),
						Report.signedPercent(results.score(bursts.name(), a).allowedVsExact()),
						Report.signedPercent(results.score(periodic.name(), a).allowedVsExact())));
		summary.row("count error, mean \\|estimate − true\\| ÷ limit, at the limit: steady / same part of every minute",
				a -> Report.percent(results.score(steady.name(), a).countErrorOfLimit()) + " / "
						+ Report.percent(results.score(periodic.name(), a).countErrorOfLimit()));
		summary.row("Redis memory per client that used its limit in the last minute",
				a -> summary.perStorage(costs, a, cost -> String.format(Locale.ROOT, "%,.0f B", cost.bytesPerClient())));
		double fixed = cost(costs, Algorithm.FIXED_WINDOW).decisionsPerSecond();
		summary.row("decisions per second, relative to the fixed window",
				a -> summary.perStorage(costs, a,
						cost -> String.format(Locale.ROOT, "%.2f", cost.decisionsPerSecond() / fixed)));
		md.append("\nSliding log: ring / sorted-set storage where they differ (they decide alike). Measured on ")
			.append(info.line()).append(String.format(Locale.ROOT, "; the fixed window made %,.0f decisions/s there.%n",
					fixed));
		return md.toString();
	}

	private void row(String label, Function<Algorithm, String> cell) {
		this.table.append("| ").append(label);
		for (Algorithm algorithm : COLUMNS) {
			this.table.append(" | ").append(cell.apply(algorithm));
		}
		this.table.append(" |\n");
	}

	private double max(List<Trace> traces, Algorithm algorithm, ToDoubleFunction<Score> value) {
		double max = 0;
		for (Trace trace : traces) {
			max = Math.max(max, value.applyAsDouble(this.results.score(trace.name(), algorithm)));
		}
		return max;
	}

	private String wrongly(Trace trace, Algorithm algorithm) {
		Score score = this.results.score(trace.name(), algorithm);
		if (score.wronglyAllowed() + score.wronglyDenied() == 0) {
			return "0";
		}
		return Report.percent(score.wronglyAllowedShare()) + " / " + Report.percent(score.wronglyDeniedShare());
	}

	private String perStorage(List<Footprint.Cost> costs, Algorithm algorithm, Function<Footprint.Cost, String> cell) {
		if (algorithm == Algorithm.SLIDING_LOG) {
			return cell.apply(cost(costs, Algorithm.SLIDING_LOG)) + " / "
					+ cell.apply(cost(costs, Algorithm.SLIDING_LOG_SORTED_SET));
		}
		return cell.apply(cost(costs, algorithm));
	}

	private static Footprint.Cost cost(List<Footprint.Cost> costs, Algorithm algorithm) {
		return costs.stream()
			.filter(cost -> cost.algorithm() == algorithm)
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("No cost measured for " + algorithm));
	}

	private static String times(double ratio) {
		return String.format(Locale.ROOT, "%.2fx", ratio);
	}

}
