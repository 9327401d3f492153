package io.windowlimiter.accuracy;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * The pictures of the accuracy run, drawn from measured answers only.
 */
public final class Charts {

	static final String LIMIT_COLOUR = "#c0392b";

	static final String OFFERED_COLOUR = "#d0d0d0";

	/**
	 * The algorithms that estimate a window's count. The token bucket counts no window (its level drains
	 * steadily by design), so how traffic falls within a window is not what moves it.
	 */
	static final List<Algorithm> WINDOWED = List.of(Algorithm.FIXED_WINDOW, Algorithm.SLIDING_LOG,
			Algorithm.SLIDING_WINDOW_COUNTER);

	private Charts() {
	}

	/**
	 * One client's trace over time, one panel per algorithm: requests offered and allowed in each second,
	 * and how many allowed requests lie in the last window at each moment, against the limit.
	 * @param from first second shown, counted from the start of the trace's first window
	 * @param to last second shown
	 */
	public static String timeline(Trace trace, String heading, double from, double to, Results results) {
		ClientTrace client = trace.clients().get(0);
		double yMax = 220;
		List<Algorithm> algorithms = Algorithms.drawn();
		Svg svg = new Svg(820, 110 + algorithms.size() * 185);
		svg.text(20, 28, heading, 16, "start", Plot.AXIS, true);
		legend(svg, 20, 52);
		double[] ticks = new double[(int) ((to - from) / 10) + 1];
		for (int i = 0; i < ticks.length; i++) {
			ticks[i] = from + i * 10;
		}
		for (int a = 0; a < algorithms.size(); a++) {
			Algorithm algorithm = algorithms.get(a);
			boolean[] allowed = results.answers(trace.name(), algorithm).get(0).allowed();
			long most = Scoring.mostAllowedInAnyWindow(client.times(), allowed, trace.windowMillis());
			Plot plot = new Plot(svg, 80, 105 + a * 185, 700, 125, from, to, 0, yMax);
			plot.xTicks(ticks, Plot::number)
				.yTicks(new double[] { 0, 100, 200 }, Plot::number)
				.horizontal(trace.limit(), LIMIT_COLOUR, "limit " + trace.limit());
			for (double edge = Math.ceil(from / 60) * 60; edge <= to; edge += 60) {
				plot.vertical(edge, Plot.MUTED, "window edge");
			}
			for (double second = Math.floor(from); second < to; second++) {
				long offered = count(client.times(), null, second);
				if (offered > 0) {
					plot.bar(second + 0.5, 0.8, offered, OFFERED_COLOUR);
					plot.bar(second + 0.5, 0.8, count(client.times(), allowed, second), Algorithms.colour(algorithm));
				}
			}
			plot.series(trailingCount(client.times(), allowed, trace, from, to), Algorithms.colour(algorithm), 2.5, null, false)
				.axes((a == algorithms.size() - 1) ? "seconds since the first window began" : null, "requests")
				.title(String.format(Locale.ROOT, "%s: at most %d allowed in any 60 s (%.2fx the limit)", Algorithms.label(algorithm),
						most, (double) most / trace.limit()));
		}
		return svg.toString();
	}

	private static void legend(Svg svg, double x, double y) {
		svg.rect(x, y - 10, 14, 12, OFFERED_COLOUR, null);
		svg.text(x + 20, y, "offered in that second", 12, "start", Plot.AXIS, false);
		svg.rect(x + 180, y - 10, 14, 12, Plot.MUTED, null);
		svg.text(x + 200, y, "allowed in that second (algorithm's colour)", 12, "start", Plot.AXIS, false);
		svg.line(x + 470, y - 4, x + 500, y - 4, Plot.MUTED, 2.5, null);
		svg.text(x + 506, y, "allowed within the last 60 s", 12, "start", Plot.AXIS, false);
	}

	/** Requests (allowed ones when {@code allowed} is given) in the trace's second {@code second}. */
	private static long count(long[] times, boolean[] allowed, double second) {
		long count = 0;
		for (int i = 0; i < times.length; i++) {
			double at = (times[i] - Traces.T0) / 1000.0;
			if (at >= second && at < second + 1 && (allowed == null || allowed[i])) {
				count++;
			}
		}
		return count;
	}

	/** The step line of allowed requests in {@code (t - window, t]}, over t from {@code from} to {@code to} s. */
	private static List<double[]> trailingCount(long[] times, boolean[] allowed, Trace trace, double from, double to) {
		long window = trace.windowMillis();
		TreeSet<Long> changes = new TreeSet<>();
		for (int i = 0; i < times.length; i++) {
			if (allowed[i]) {
				changes.add(times[i]);
				changes.add(times[i] + window);
			}
		}
		List<double[]> points = new ArrayList<>();
		double previous = trailing(times, allowed, window, Traces.T0 + Math.round(from * 1000));
		points.add(new double[] { from, previous });
		for (long change : changes) {
			double second = (change - Traces.T0) / 1000.0;
			if (second > from && second < to) {
				double now = trailing(times, allowed, window, change);
				points.add(new double[] { second, previous });
				points.add(new double[] { second, now });
				previous = now;
			}
		}
		points.add(new double[] { to, previous });
		return points;
	}

	private static double trailing(long[] times, boolean[] allowed, long window, long now) {
		long count = 0;
		for (int i = 0; i < times.length; i++) {
			if (allowed[i] && times[i] > now - window && times[i] <= now) {
				count++;
			}
		}
		return count;
	}

	/**
	 * Overshoot against traffic level, one panel per traffic shape.
	 */
	public static String overshoot(List<List<Trace>> families, List<String> titles, Results results) {
		double panel = 300;
		double gap = 90;
		Svg svg = new Svg((int) (80 + families.size() * (panel + gap)), 430);
		svg.text(20, 28, "Most requests one client got through in any 60 s, against the traffic it offered (limit 100 per minute)",
				15, "start", Plot.AXIS, true);
		algorithmLegend(svg, 20, 54, Algorithms.drawn());
		double xMax = 0;
		for (List<Trace> family : families) {
			for (Trace trace : family) {
				xMax = Math.max(xMax, trace.level());
			}
		}
		for (int f = 0; f < families.size(); f++) {
			Plot plot = new Plot(svg, 80 + f * (panel + gap), 110, panel, 250, 0, xMax * 1.05, 0, 2.2);
			double[] ticks = new double[(int) Math.floor(xMax * 2) + 1];
			for (int i = 0; i < ticks.length; i++) {
				ticks[i] = i * 0.5;
			}
			plot.xTicks(ticks, value -> Plot.number(value) + "x")
				.yTicks(new double[] { 0, 0.5, 1, 1.5, 2 }, value -> Plot.number(value) + "x")
				.horizontal(1, LIMIT_COLOUR, "the limit");
			for (Algorithm algorithm : Algorithms.drawn()) {
				plot.series(points(families.get(f), Trace::level, algorithm, results, Score::overshoot), Algorithms.colour(algorithm), 2,
						null, true);
			}
			plot.axes("offered per minute ÷ limit", (f == 0) ? "most allowed in 60 s ÷ limit" : null).title(titles.get(f));
		}
		return svg.toString();
	}

	/**
	 * How uneven traffic within a window drives the counter's error: the same offered load (the
	 * limit per minute) squeezed into a shorter and shorter part of each minute, and what follows from
	 * the error: too much let through in some spans, too little overall.
	 */
	public static String unevenness(List<Trace> traces, List<String> shares, Results results) {
		double panel = 240;
		double gap = 100;
		Svg svg = new Svg((int) (80 + 3 * (panel + gap)), 430);
		svg.text(20, 28, "The same load, the limit per minute, sent in a shorter and shorter part of every minute", 15,
				"start", Plot.AXIS, true);
		algorithmLegend(svg, 20, 54, WINDOWED);
		double errorMax = 0;
		double overshootMax = 0;
		double changeMin = 0;
		double changeMax = 0;
		for (Trace trace : traces) {
			for (Algorithm algorithm : WINDOWED) {
				Score score = results.score(trace.name(), algorithm);
				errorMax = Math.max(errorMax, score.countErrorOfLimit() * 100);
				overshootMax = Math.max(overshootMax, score.overshoot());
				changeMin = Math.min(changeMin, score.allowedVsExact() * 100);
				changeMax = Math.max(changeMax, score.allowedVsExact() * 100);
			}
		}
		double[] errorTicks = niceTicks(0, errorMax);
		categoryPanel(svg, 80, traces, shares, results, "error of its own count", "mean |estimate − true| ÷ limit, %",
				score -> score.countErrorOfLimit() * 100, errorTicks, null);
		categoryPanel(svg, 80 + panel + gap, traces, shares, results, "most allowed in any 60 s", "÷ limit",
				Score::overshoot, niceTicks(0, overshootMax), 1.0);
		categoryPanel(svg, 80 + 2 * (panel + gap), traces, shares, results, "allowed in all, vs the exact log",
				"% more (+) or fewer (−)", score -> score.allowedVsExact() * 100, niceTicks(changeMin, changeMax), 0.0);
		return svg.toString();
	}

	/** Round tick values covering [min, max], 1, 2 or 5 times a power of ten apart, at most 6 of them. */
	static double[] niceTicks(double min, double max) {
		double span = Math.max(max - min, 1e-9);
		double step = Math.pow(10, Math.floor(Math.log10(span)));
		for (double factor : new double[] { 0.1, 0.2, 0.5, 1, 2, 5, 10 }) {
			if (span / (step * factor) <= 5) {
				step *= factor;
				break;
			}
		}
		double from = Math.floor(min / step) * step;
		double to = Math.ceil(max / step) * step;
		int count = (int) Math.round((to - from) / step) + 1;
		double[] ticks = new double[count];
		for (int i = 0; i < count; i++) {
			ticks[i] = from + i * step;
		}
		return ticks;
	}

	private static void categoryPanel(Svg svg, double left, List<Trace> traces, List<String> shares, Results results,
			String title, String yTitle, ToDoubleFunction<Score> value, double[] yTicks, Double reference) {
		Plot plot = new Plot(svg, left, 110, 240, 250, -0.3, traces.size() - 0.7, yTicks[0], yTicks[yTicks.length - 1]);
		double[] categories = new double[traces.size()];
		for (int i = 0; i < categories.length; i++) {
			categories[i] = i;
		}
		plot.xTicks(categories, index -> shares.get((int) index)).yTicks(yTicks, Plot::number);
		if (reference != null) {
			plot.horizontal(reference, LIMIT_COLOUR, null);
		}
		for (Algorithm algorithm : WINDOWED) {
			List<double[]> points = new ArrayList<>();
			for (int i = 0; i < traces.size(); i++) {
				points.add(new double[] { i, value.applyAsDouble(results.score(traces.get(i).name(), algorithm)) });
			}
			plot.series(points, Algorithms.colour(algorithm), 2, null, true);
		}
		plot.axes("part of every minute it sends in", yTitle).title(title);
	}

	private static void algorithmLegend(Svg svg, double x, double y, List<Algorithm> algorithms) {
		double at = x;
		for (Algorithm algorithm : algorithms) {
			svg.line(at, y - 4, at + 26, y - 4, Algorithms.colour(algorithm), 2.5, null);
			svg.circle(at + 13, y - 4, 3.5, Algorithms.colour(algorithm));
			svg.text(at + 32, y, Algorithms.label(algorithm), 12, "start", Plot.AXIS, false);
			at += 50 + Algorithms.label(algorithm).length() * 6.5;
		}
	}

	private static List<double[]> points(List<Trace> traces, ToDoubleFunction<Trace> x, Algorithm algorithm,
			Results results, ToDoubleFunction<Score> y) {
		List<double[]> points = new ArrayList<>();
		for (Trace trace : traces) {
			points.add(new double[] { x.applyAsDouble(trace), y.applyAsDouble(results.score(trace.name(), algorithm)) });
		}
		return points;
	}

}
