package io.windowlimiter.gateway;

import java.io.IOException;
import java.io.StringReader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.xml.parsers.DocumentBuilderFactory;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.xml.sax.InputSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The commands the README and the {@code docs/} pages give a reader name what the build makes: a
 * {@code java -jar} names the jar its module's pom produces (artifactId-version, or the module's
 * {@code finalName}, in the module's {@code target/}), every {@code -pl} names modules of the root pom, every
 * {@code -Dtest}/{@code -Dit.test} a test class of those modules, a jar the README runs is built by a package
 * command of the README, and the README's test command is the one CI runs ({@code .ci/run}).
 *
 * <p>The pages are read as text: commands in {@code ```bash} blocks and in inline code alike (an inline command
 * may wrap to the next line). Nothing is run: the packaged jars are started by the {@code *IT} tests.
 */
class DocsCommandsTests {

	private static final Path ROOT = Path.of("..");

	private static final Pattern JAR = Pattern.compile("java -jar ([\\w.-]+)/target/([\\w.-]+)\\.jar");

	/** An {@code mvn} command up to the end of its line or its inline code span. */
	private static final Pattern MVN = Pattern.compile("\\bmvn [^`\\n]*");

	private static final Pattern MODULES = Pattern.compile("-pl\\s+([\\w,.-]+)");

	private static final Pattern TESTS = Pattern.compile("-D(?:it\\.)?test='?([\\w,*#]+)'?");

	@Test
	void everyJarRunIsTheJarItsModuleBuilds() {
		List<String> checked = new ArrayList<>();
		for (Path page : DocsYamlSnippetTests.pages()) {
			Matcher jar = JAR.matcher(DocsYamlSnippetTests.read(page));
			while (jar.find()) {
				String module = jar.group(1);
				assertThat(modules()).as("%s runs a jar of module %s", page, module).contains(module);
				assertThat(jar.group(2)).as("%s: the jar %s builds", page, module).isEqualTo(jarName(module));
				checked.add(page.getFileName() + ": " + jar.group());
			}
		}
		// the README's first screen and its Server MVC section, at least
		assertThat(checked).contains("README.md: java -jar gateway-app/target/" + jarName("gateway-app") + ".jar",
				"README.md: java -jar gateway-app-mvc/target/" + jarName("gateway-app-mvc") + ".jar");
	}

	@Test
	void everyMavenCommandNamesModulesAndTestsThatExist() {
		int commands = 0;
		for (Path page : DocsYamlSnippetTests.pages()) {
			for (String command : mavenCommands(DocsYamlSnippetTests.read(page))) {
				List<String> named = new ArrayList<>();
				Matcher modules = MODULES.matcher(command);
				while (modules.find()) {
					for (String module : modules.group(1).split(",")) {
						assertThat(modules()).as("%s: %s", page, command).contains(module);
						named.add(module);
					}
				}
				Matcher tests = TESTS.matcher(command);
				while (tests.find()) {
					for (String test : tests.group(1).split(",")) {
						if (test.equals("none") || test.contains("*")) {
							continue;
						}
						String testClass = test.replaceAll("#.*", "");
						assertThat(named).as("%s: %s names a test without -pl", page, command).isNotEmpty();
						assertThat(named.stream().anyMatch(module -> testClassExists(module, testClass)))
							.as("%s: %s names test class %s in %s", page, command, testClass, named)
							.isTrue();
					}
				}
				commands++;
			}
		}
		assertThat(commands).as("mvn commands found").isGreaterThan(5);
	}

	/** The README's first screen builds the jar it runs (the MVC jar was once run "after the command above"). */
	@Test
	void everyJarTheReadmeRunsIsBuiltByAPackageCommandOfTheReadme() {
		String readme = DocsYamlSnippetTests.read(ROOT.resolve("README.md"));
		List<String> packaged = new ArrayList<>();
		for (String command : mavenCommands(readme)) {
			Matcher modules = MODULES.matcher(command);
			if (command.matches(".*\\bpackage\\b.*") && modules.find()) {
				packaged.addAll(List.of(modules.group(1).split(",")));
			}
		}
		Matcher jar = JAR.matcher(readme);
		int jars = 0;
		while (jar.find()) {
			assertThat(packaged).as("README.md runs %s; its package commands build %s", jar.group(), packaged)
				.contains(jar.group(1));
			jars++;
		}
		assertThat(jars).isGreaterThanOrEqualTo(2);
	}

	@Test
	void theReadmesTestCommandIsWhatCiRuns() {
		String readme = DocsYamlSnippetTests.read(ROOT.resolve("README.md"));
		Matcher block = Pattern.compile("(?s)## Run the tests\\s+```bash\\n(.*?)```").matcher(readme);
		assertThat(block.find()).as("README.md has a 'Run the tests' section with a bash block").isTrue();
		String readmeCommand = block.group(1).strip();
		List<String> ciCommands = DocsYamlSnippetTests.read(ROOT.resolve(".ci/run")).lines()
			.map(String::strip)
			.filter(line -> line.startsWith("mvn "))
			.toList();
		assertThat(ciCommands).containsExactly(readmeCommand);
	}

	private static List<String> mavenCommands(String text) {
		List<String> commands = new ArrayList<>();
		// an inline command wrapped to the next line: join the lines of a code span first
		Matcher mvn = MVN.matcher(text.replaceAll("(`[^`\\n]*)\\n([^`\\n]*`)", "$1 $2"));
		while (mvn.find()) {
			commands.add(mvn.group());
		}
		return commands;
	}

	private static boolean testClassExists(String module, String testClass) {
		try (Stream<Path> files = Files.walk(ROOT.resolve(module).resolve("src/test/java"))) {
			return files.anyMatch(file -> file.getFileName().toString().equals(testClass + ".java"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** The modules of the root pom. */
	static List<String> modules() {
		Element project = pom(ROOT.resolve("pom.xml"));
		List<String> modules = new ArrayList<>();
		Element list = child(project, "modules");
		for (Node node = list.getFirstChild(); node != null; node = node.getNextSibling()) {
			if (node instanceof Element module) {
				modules.add(module.getTextContent().strip());
			}
		}
		return modules;
	}

	/** The name of the jar a module's pom produces, without {@code .jar}. */
	static String jarName(String module) {
		Element project = pom(ROOT.resolve(module).resolve("pom.xml"));
		Element build = child(project, "build");
		Element finalName = (build != null) ? child(build, "finalName") : null;
		if (finalName != null) {
			return finalName.getTextContent().strip();
		}
		Element version = child(project, "version");
		if (version == null) {
			version = child(child(project, "parent"), "version");
		}
		return text(project, "artifactId") + "-" + version.getTextContent().strip();
	}

	static Element pom(Path file) {
		return pom(file.toString(), DocsYamlSnippetTests.read(file));
	}

	/** A pom's {@code <project>}, from its text. */
	static Element pom(String where, String xml) {
		try {
			DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
			factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
			Document document = factory.newDocumentBuilder()
				.parse(new InputSource(new StringReader(xml)));
			return document.getDocumentElement();
		}
		catch (Exception ex) {
			throw new IllegalStateException("Cannot read " + where, ex);
		}
	}

	/** The first child element of that name, or null. */
	static Element child(Element parent, String name) {
		for (Node node = parent.getFirstChild(); node != null; node = node.getNextSibling()) {
			if (node instanceof Element element && element.getTagName().equals(name)) {
				return element;
			}
		}
		return null;
	}

	static String text(Element parent, String name) {
		Element child = child(parent, name);
		assertThat(child).as("<%s> in <%s>", name, parent.getTagName()).isNotNull();
		return child.getTextContent().strip();
	}

}
