package io.windowlimiter.gateway.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The sample answers of the docs, read where a test can compare them with what the gateway answers, so that a
 * sample cannot drift from the code. The convention, for whoever writes a page:
 * <ul>
 * <li>A {@code ```json} block is one answer, marked {@code <!-- docs-test: answer <id> -->} on the line before;
 * a test names the page and the id ({@link #answer}) and compares the block with the answer it got.</li>
 * <li>A {@code ```sh} block of requests and answers (a {@code curl} command, then its answer on the next line) is
 * marked {@code <!-- docs-test: answers -->}: a test runs each request ({@link #exchanges}) and compares.</li>
 * <li>The comparison ({@link #assertSameShape}): the same field names at every level, arrays of the same length,
 * and the same values, but for the fields the mark lists after {@code varying:} (times, counts that depend on
 * the traffic, hashes of a random key), which need only be of the same JSON type (a number, a string); a field
 * is named alone ({@code reset}) or under its parent's name ({@code clients.error}, arrays left out);
 * {@code {...}} or {@code [...]} in the sample stands for any value the page leaves out.</li>
 * </ul>
 * Paths are read from a module's directory, where Maven runs its tests: the repository is its parent.
 */
public final class DocsSamples {

	/** The repository, seen from a module's directory. */
	public static final Path ROOT = Path.of("..");

	/** What {@code {...}} and {@code [...]} in a sample become: any value. */
	private static final String ELIDED = "\u2026elided\u2026";

	private static final Pattern MARK = Pattern
		.compile("(?m)^[ \\t]*<!-- docs-test: (answers?)(?: ([\\w-]+))?((?: varying:[\\w. ]+)?) -->\\s*\\n[ \\t]*```(json|sh)"
				+ "[ \\t]*\\n(.*?)^[ \\t]*```", Pattern.DOTALL);

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private DocsSamples() {
	}

	/** A request of an {@code answers} block and the answer the page shows for it. */
	public record Exchange(String page, int line, String method, String path, String body,
			String answer, Set<String> varying) {

		@Override
		public String toString() {
			return this.page + ":" + this.line + " " + this.method + " " + this.path;
		}

	}

	/** A marked answer, with the fields that may vary. */
	public record Answer(String page, int line, String json, Set<String> varying) {
	}

	/** The answer marked {@code <!-- docs-test: answer id -->} on the page ({@code docs/configuration.md}). */
	public static Answer answer(String page, String id) {
		String text = read(page);
		Matcher mark = MARK.matcher(text);
		while (mark.find()) {
			if (mark.group(1).equals("answer") && id.equals(mark.group(2))) {
				return new Answer(page, line(text, mark.start(5)), mark.group(5).strip(), varying(mark.group(3)));
			}
		}
		throw new AssertionError(page + " has no ```json block marked <!-- docs-test: answer " + id + " -->");
	}

	/**
	 * Every request of the page's {@code answers} blocks, in order: {@code curl} with {@code -X} (GET without),
	 * the URL's path and query, {@code -d '...'}, and the answer on the line after the command.
	 */
	public static List<Exchange> exchanges(String page) {
		String text = read(page);
		List<Exchange> exchanges = new ArrayList<>();
		Matcher mark = MARK.matcher(text);
		while (mark.find()) {
			if (!mark.group(1).equals("answers")) {
				continue;
			}
			Set<String> varying = varying(mark.group(3));
			String[] lines = mark.group(5).strip().split("\n");
			int first = line(text, mark.start(5));
			for (int i = 0; i < lines.length; i++) {
				lines[i] = lines[i].strip();
				if (!lines[i].startsWith("curl ")) {
					continue;
				}
				int start = i;
				StringBuilder command = new StringBuilder(lines[i]);
				while (lines[i].endsWith("\\")) {
					command.setLength(command.length() - 1);
					i++;
					lines[i] = lines[i].strip();
					command.append(' ').append(lines[i]);
				}
				String answer = (i + 1 < lines.length) ? lines[i + 1].strip() : "";
				if (!answer.startsWith("{")) {
					throw new AssertionError(page + ":" + (first + start) + ": no answer on the line after " + command);
				}
				exchanges.add(exchange(page, first + start, command.toString(), answer, varying));
			}
		}
		return exchanges;
	}

	private static Exchange exchange(String page, int line, String command, String answer, Set<String> varying) {
		Matcher method = Pattern.compile(" -X (\\w+)").matcher(command);
		Matcher url = Pattern.compile(" (?:https?://)?localhost:\\d+(/\\S*)").matcher(command);
		Matcher body = Pattern.compile(" -d '([^']*)'").matcher(command);
		if (!url.find()) {
			throw new AssertionError(page + ":" + line + ": no localhost URL in " + command);
		}
		return new Exchange(page, line, method.find() ? method.group(1) : "GET", url.group(1),
				body.find() ? body.group(1) : null, answer, varying);
	}

	/**
	 * The answer has the sample's shape: the same field names at every level, arrays of the same length, equal
	 * values but for the {@code varying} fields (of the same JSON type) and what the sample elides.
	 * @param where the page and line, for the message
	 */
	public static void assertSameShape(String where, String sample, String actual, Set<String> varying) {
		JsonNode documented = parse(where + " (the page's sample)",
				sample.replaceAll("\\{\\.\\.\\.}|\\[\\.\\.\\.]", "\"" + ELIDED + "\""));
		JsonNode answered = parse(where + " (the answer)", actual);
		List<String> differences = new ArrayList<>();
		compare("$", documented, answered, varying, differences);
		if (!differences.isEmpty()) {
			throw new AssertionError("The sample at " + where + " is not what the gateway answers:\n  "
					+ String.join("\n  ", differences) + "\nthe sample: " + sample + "\nthe answer: " + actual);
		}
	}

	private static void compare(String path, JsonNode documented, JsonNode answered, Set<String> varying,
			List<String> differences) {
		if (documented.isString() && documented.asString().equals(ELIDED)) {
			return;
		}
		if (documented.isObject() && answered.isObject()) {
			Set<String> names = new TreeSet<>(documented.propertyNames());
			Set<String> actual = new TreeSet<>(answered.propertyNames());
			if (!names.equals(actual)) {
				Set<String> missing = new TreeSet<>(actual);
				missing.removeAll(names);
				Set<String> extra = new TreeSet<>(names);
				extra.removeAll(actual);
				differences.add(path + ": the answer's fields " + missing + " are not in the sample; the sample's "
						+ extra + " are not in the answer");
			}
			for (String name : names) {
				if (actual.contains(name)) {
					JsonNode value = documented.get(name);
					JsonNode real = answered.get(name);
					if (isVarying(path + "." + name, varying) && !value.isContainer()) {
						if (value.getNodeType() != real.getNodeType()) {
							differences.add(path + "." + name + ": " + real + " is not of the sample's type (" + value + ")");
						}
					}
					else {
						compare(path + "." + name, value, real, varying, differences);
					}
				}
			}
			return;
		}
		if (documented.isArray() && answered.isArray()) {
			if (documented.size() != answered.size()) {
				differences.add(path + ": " + answered.size() + " items, the sample shows " + documented.size());
				return;
			}
			for (int i = 0; i < documented.size(); i++) {
				compare(path + "[" + i + "]", documented.get(i), answered.get(i), varying, differences);
			}
			return;
		}
		if (!documented.equals(answered)) {
			differences.add(path + ": the answer has " + answered + ", the sample " + documented);
		}
	}

	/**
	 * Whether the field at that path is one the mark names: by its name ({@code reset}) or by its name under its
	 * parent's ({@code clients.error}, where {@code error} alone would also name an error message).
	 */
	private static boolean isVarying(String path, Set<String> varying) {
		String plain = path.replaceAll("\\[\\d+]", "");
		return varying.stream().anyMatch(entry -> plain.endsWith("." + entry));
	}

	private static JsonNode parse(String what, String json) {
		try {
			return JSON.readTree(json);
		}
		catch (RuntimeException ex) {
			throw new AssertionError(what + " is no JSON: " + json, ex);
		}
	}

	private static Set<String> varying(String words) {
		Set<String> varying = new TreeSet<>();
		if (words != null && !words.isBlank()) {
			for (String word : words.strip().substring("varying:".length()).strip().split("\\s+")) {
				varying.add(word);
			}
		}
		return varying;
	}

	private static int line(String text, int offset) {
		return (int) text.substring(0, offset).chars().filter(c -> c == '\n').count() + 1;
	}

	/** A file of the repository, by its path there ({@code docs/operating.md}). */
	public static String read(String page) {
		try {
			return Files.readString(ROOT.resolve(page));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
