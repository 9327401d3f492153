package io.windowlimiter.accuracy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The traces of the accuracy run. Every random one is drawn from a fixed seed, so every run replays
 * the very same requests and the figures reproduce.
 *
 * <p>All traces use a limit of 100 requests per minute and start at {@link #T0}, a whole minute, so
 * the fixed and counter windows (aligned to the epoch) start with the trace.
 */
public final class Traces {

	/** 2026-01-01T00:00:00Z. */
	public static final long T0 = 1_767_225_600_000L;

	public static final long LIMIT = 100;

	public static final Duration WINDOW = Duration.ofMinutes(1);

	private static final long W = WINDOW.toMillis();

	private Traces() {
	}

	/** The design notes' case: 100 requests at second 59, 100 more at second 61, one window edge between. */
	public static Trace windowEdge() {
		long[] times = new long[200];
		for (int i = 0; i < 200; i++) {
			times[i] = T0 + (i < 100 ? 59_000 : 61_000);
		}
		return new Trace("window-edge", "one client: 100 requests at second 59, 100 at second 61", 2.0, LIMIT, WINDOW,
				List.of(new ClientTrace("client", times)));
	}

	/**
	 * The sliding window counter's worst case: 100 requests at the very end of one window, then one
	 * every 100 ms through the whole next window. The counter assumes the first 100 were spread evenly
	 * over their window and so lets the newer ones in as the older ones seem to leave; in fact all of
	 * them stay within 60 s until the newer window has almost ended.
	 */
	public static Trace edgeThenSteady() {
		long[] times = new long[700];
		for (int i = 0; i < 100; i++) {
			times[i] = T0 + 59_900;
		}
		for (int i = 0; i < 600; i++) {
			times[100 + i] = T0 + 60_000 + i * 100L;
		}
		return new Trace("edge-then-steady",
				"one client: 100 requests at second 59.9, then one every 100 ms from second 60 to 119.9",
				7.0, LIMIT, WINDOW, List.of(new ClientTrace("client", times)));
	}

	/**
	 * Steady random traffic: every client sends independently at random moments (a Poisson process)
	 * at {@code level} times the limit, on average.
	 */
	public static Trace steady(double level, int clients, int windows, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		double perMilli = level * LIMIT / W;
		List<ClientTrace> traces = new ArrayList<>();
		for (int c = 0; c < clients; c++) {
			traces.add(new ClientTrace(client(c), poisson(random, perMilli, T0, T0 + windows * W)));
		}
		return new Trace("steady-" + level(level), "steady random arrivals at " + level(level) + " the limit",
				level, LIMIT, WINDOW, traces);
	}

	/**
	 * On/off bursts at random: every client switches between sending and silence, each period of random
	 * length (exponential; on {@code duty} of a minute, off the rest of a minute, on average), and
	 * while on it sends at random moments, fast enough that it offers {@code level} times the limit
	 * per minute on average. Bursts fall anywhere, across window edges too.
	 */
	public static Trace onOff(double level, double duty, int clients, int windows, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		List<ClientTrace> traces = new ArrayList<>();
		for (int c = 0; c < clients; c++) {
			traces.add(new ClientTrace(client(c), randomBursts(random, level, duty, windows)));
		}
		return new Trace("bursts-" + trim(duty * 100) + "pct-" + level(level), "on/off bursts at random, on "
				+ percent(duty) + " of the time, " + level(level) + " the limit on average", level, LIMIT, WINDOW, traces);
	}

	/**
	 * Bursts in the same part of every minute, like a job that runs every minute: every client sends
	 * during {@code duty} of each minute, at a phase of its own (drawn once), and is silent the rest of
	 * the minute; it offers {@code level} times the limit per minute on average.
	 */
	public static Trace periodic(double level, double duty, int clients, int windows, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		List<ClientTrace> traces = new ArrayList<>();
		for (int c = 0; c < clients; c++) {
			traces.add(new ClientTrace(client(c), periodicBursts(random, level, duty, windows)));
		}
		return new Trace("periodic-" + trim(duty * 100) + "pct-" + level(level), "bursts in the same " + percent(duty)
				+ " of every minute, " + level(level) + " the limit on average", level, LIMIT, WINDOW, traces);
	}

	/**
	 * Many clients, mostly under their limits, like the traffic of Cloudflare's measurement: each
	 * client's average rate is drawn from a log-normal distribution (median 0.1 of the limit; about 1
	 * client in 100 goes over it); 6 clients in 10 send steadily, 3 in on/off bursts at random and 1 in
	 * the same part of every minute (both on 20% of the time).
	 */
	public static Trace manyClients(int clients, int windows, long seed) {
		SplittableRandom random = new SplittableRandom(seed);
		List<ClientTrace> traces = new ArrayList<>();
		double offered = 0;
		for (int c = 0; c < clients; c++) {
			double level = 0.1 * Math.exp(gaussian(random));
			offered += level;
			double kind = random.nextDouble();
			long[] times = (kind < 0.6) ? poisson(random, level * LIMIT / W, T0, T0 + windows * W)
					: (kind < 0.9) ? randomBursts(random, level, 0.2, windows) : periodicBursts(random, level, 0.2, windows);
			traces.add(new ClientTrace(client(c), times));
		}
		return new Trace("many-clients", clients + " clients, rates log-normal around 0.1x the limit, 4 in 10 bursty",
				offered / clients, LIMIT, WINDOW, traces);
	}

	private static long[] randomBursts(SplittableRandom random, double level, double duty, int windows) {
		double meanOn = duty * W;
		double meanOff = (1 - duty) * W;
		double perMilli = level * LIMIT / meanOn;
		long end = T0 + windows * W;
		List<Long> times = new ArrayList<>();
		boolean on = random.nextDouble() < duty;
		double at = T0;
		while (at < end) {
			double until = Math.min(end, at - Math.log(1.0 - random.nextDouble()) * (on ? meanOn : meanOff));
			if (on) {
				for (long time : poisson(random, perMilli, (long) Math.ceil(at), (long) Math.ceil(until))) {
					times.add(time);
				}
			}
			at = until;
			on = !on;
		}
		return times.stream().mapToLong(Long::longValue).toArray();
	}

	private static long[] periodicBursts(SplittableRandom random, double level, double duty, int windows) {
		long active = Math.round(duty * W);
		long phase = random.nextLong(W);
		// Arrivals on the client's "active clock", which only runs while it is on, mapped to real time;
		// the first burst starts a minute before the trace, so every minute of the trace has its burst.
		long[] activeTimes = poisson(random, level * LIMIT / active, 0, (windows + 1) * active);
		List<Long> times = new ArrayList<>(activeTimes.length);
		for (long at : activeTimes) {
			long cycle = at / active;
			long time = T0 - W + phase + cycle * W + (at - cycle * active);
			if (time >= T0 && time < T0 + windows * W) {
				times.add(time);
			}
		}
		return times.stream().mapToLong(Long::longValue).toArray();
	}

	/** Arrival times of a Poisson process of the given rate (per ms) in [from, to), whole ms. */
	private static long[] poisson(SplittableRandom random, double perMilli, long from, long to) {
		List<Long> times = new ArrayList<>();
		double at = from;
		while (true) {
			at += -Math.log(1.0 - random.nextDouble()) / perMilli;
			if (at >= to) {
				break;
			}
			times.add((long) Math.floor(at));
		}
		return times.stream().mapToLong(Long::longValue).toArray();
	}

	/** A standard normal draw (Box-Muller), so the trace depends on nothing but the seed. */
	private static double gaussian(SplittableRandom random) {
		double u = 1.0 - random.nextDouble();
		double v = random.nextDouble();
		return Math.sqrt(-2.0 * Math.log(u)) * Math.cos(2.0 * Math.PI * v);
	}

	private static String client(int index) {
		return String.format(Locale.ROOT, "c%04d", index);
	}

	static String level(double level) {
		return String.format(Locale.ROOT, "%sx", trim(level));
	}

	private static String percent(double share) {
		return trim(share * 100) + "%";
	}

	private static String trim(double value) {
		String text = String.format(Locale.ROOT, "%.2f", value);
		return text.replaceAll("\\.?0+$", "");
	}

}
