package io.windowlimiter.accuracy;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * How one algorithm decided one trace, compared with the exact sliding log on the same trace.
 *
 * @param trace the trace's name
 * @param algorithm the algorithm
 * @param requests requests offered
 * @param allowed requests the algorithm allowed
 * @param exactAllowed requests the exact log allowed
 * @param wronglyAllowed requests the algorithm allowed and the exact log denied
 * @param wronglyDenied requests the algorithm denied and the exact log allowed
 * @param overshoot the most requests one client had allowed in any window-long span, divided by the limit
 * @param clients clients in the trace
 * @param clientsOverLimit clients that had more than the limit allowed in some window-long span
 * @param clientsLimited clients the exact log denied at least once: those that reached their limit
 * @param countErrorOfLimit mean, over all requests, of |estimate - true count| / limit
 * @param countErrorOfTrue mean, over requests whose true count is not 0, of |estimate - true count| / true count
 * @param modelMismatches answers of the script that differ from the rule re-run in Java (must be 0)
 */
public record Score(String trace, Algorithm algorithm, long requests, long allowed, long exactAllowed,
		long wronglyAllowed, long wronglyDenied, double overshoot, long clients, long clientsOverLimit,
		long clientsLimited, double countErrorOfLimit, double countErrorOfTrue, long modelMismatches) {

	/** Requests decided otherwise than the exact log decided them, as a share of all requests. */
	public double decidedDifferently() {
		return share(this.wronglyAllowed + this.wronglyDenied);
	}

	/** Allowed requests against those the exact log allowed: +0.1 is 10% more. */
	public double allowedVsExact() {
		return (this.exactAllowed == 0) ? 0 : (double) this.allowed / this.exactAllowed - 1;
	}

	public double wronglyAllowedShare() {
		return share(this.wronglyAllowed);
	}

	public double wronglyDeniedShare() {
		return share(this.wronglyDenied);
	}

	private double share(long count) {
		return (this.requests == 0) ? 0 : (double) count / this.requests;
	}

}
