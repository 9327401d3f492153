package io.windowlimiter.accuracy;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.windowlimiter.core.algorithm.Algorithm;

/**
 * Every trace's answers and scores, per algorithm, in the order the traces ran.
 */
public final class Results {

	private final Map<String, Map<Algorithm, Score>> scores = new LinkedHashMap<>();

	private final Map<String, Map<Algorithm, List<ScriptReplay.Answers>>> answers = new LinkedHashMap<>();

	public void add(String trace, Algorithm algorithm, List<ScriptReplay.Answers> answers, Score score) {
		this.scores.computeIfAbsent(trace, name -> new EnumMap<>(Algorithm.class)).put(algorithm, score);
		this.answers.computeIfAbsent(trace, name -> new EnumMap<>(Algorithm.class)).put(algorithm, answers);
	}

	public boolean has(String trace) {
		return this.scores.containsKey(trace);
	}

	public Score score(String trace, Algorithm algorithm) {
		Score score = this.scores.getOrDefault(trace, Map.of()).get(algorithm);
		if (score == null) {
			throw new IllegalArgumentException("No score for " + trace + " / " + algorithm);
		}
		return score;
	}

	public List<ScriptReplay.Answers> answers(String trace, Algorithm algorithm) {
		return this.answers.get(trace).get(algorithm);
	}

	/** All scores, trace by trace, in run order. */
	public List<Score> all() {
		List<Score> all = new ArrayList<>();
		this.scores.values().forEach(byAlgorithm -> all.addAll(byAlgorithm.values()));
		return all;
	}

}
