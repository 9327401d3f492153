package io.windowlimiter.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Where a run's report goes: {@code benchmarks/target/reports/<date>[-<benchmark>].md}, outside the tree, and to
 * standard output. The figures a reader should trust live in one page per benchmark under
 * {@code benchmarks/results/} (its {@code README.md} lists them), updated by hand from the latest report: its
 * tables pasted under "Current figures", and a row added to the page's history where a figure changed, with the
 * commit and why. A run cannot write that history, and a page per run is what made the results a log nobody could
 * read, so the run's own file stays a scratch copy.
 */
final class ReportFile {

	/** Relative to the project's root; under {@code target/}, which git ignores. */
	static final String DIRECTORY = "benchmarks/target/reports";

	private ReportFile() {
	}

	/** The directory a run writes its report (and the profile part its flame graphs) into. */
	static Path directory(Path root) {
		return root.resolve(DIRECTORY);
	}

	/**
	 * Writes {@code markdown} as {@code name} in {@link #directory}, prints it, then where it went and which pages
	 * (paths relative to the root) to update from it.
	 */
	static void write(Path root, String name, String markdown, List<String> pages) throws IOException {
		Path file = directory(root).resolve(name);
		Files.createDirectories(file.getParent());
		Files.writeString(file, markdown);
		System.out.println();
		System.out.println(markdown);
		System.out.println("Written to " + root.relativize(file) + "; the current page" + (pages.size() > 1 ? "s " : " ")
				+ String.join(", ", pages) + (pages.size() > 1 ? " are" : " is")
				+ " updated by hand from it (see benchmarks/results/README.md)");
	}

}
