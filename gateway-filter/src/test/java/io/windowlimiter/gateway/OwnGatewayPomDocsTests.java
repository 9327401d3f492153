package io.windowlimiter.gateway;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

import static io.windowlimiter.gateway.DocsCommandsTests.child;
import static io.windowlimiter.gateway.DocsCommandsTests.text;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The complete poms of docs/your-own-gateway.md build what this repository builds: Spring Boot's parent at the
 * version the root pom's parent names, Spring Cloud's BOM at its {@code spring-cloud.version}, the Java version,
 * the gateway starter the adapter is built against (the adapter module's own dependency) and the adapter's
 * artifact id at the project's version. The page's WebFlux {@code application.yml} is started by
 * {@link DocsYamlSnippetTests}.
 */
class OwnGatewayPomDocsTests {

	private static final Path PAGE = Path.of("../docs/your-own-gateway.md");

	private static final Pattern POM = Pattern.compile("(?s)<!-- docs-test: pom (\\w+) -->\\s*\\n```xml\\n(.*?)```");

	@Test
	void thePagesPomsNameTheProjectsVersionsAndArtifacts() {
		Element root = DocsCommandsTests.pom(Path.of("../pom.xml"));
		Matcher pom = POM.matcher(DocsYamlSnippetTests.read(PAGE));
		List<String> servers = new ArrayList<>();
		while (pom.find()) {
			String server = pom.group(1);
			servers.add(server);
			String module = server.equals("mvc") ? "gateway-filter-mvc" : "gateway-filter";
			Element page = DocsCommandsTests.pom(PAGE + " (" + server + ")", pom.group(2));
			Element parent = child(page, "parent");
			assertThat(text(parent, "artifactId")).isEqualTo("spring-boot-starter-parent");
			assertThat(text(parent, "version")).as("Boot").isEqualTo(text(child(root, "parent"), "version"));
			Element properties = child(page, "properties");
			Element ours = child(root, "properties");
			assertThat(text(properties, "spring-cloud.version")).isEqualTo(text(ours, "spring-cloud.version"));
			assertThat(text(properties, "java.version")).isEqualTo(text(ours, "java.version"));
			assertThat(dependencies(child(child(page, "dependencyManagement"), "dependencies")))
				.contains("org.springframework.cloud:spring-cloud-dependencies:${spring-cloud.version}");
			Element adapter = DocsCommandsTests.pom(Path.of("..", module, "pom.xml"));
			String starter = dependencies(child(adapter, "dependencies")).stream()
				.filter(dependency -> dependency.startsWith("org.springframework.cloud:spring-cloud-starter-gateway"))
				.findFirst()
				.orElseThrow();
			assertThat(dependencies(child(page, "dependencies"))).as("the %s pom's dependencies", server)
				.contains(starter, "io.windowlimiter:" + text(adapter, "artifactId") + ":" + text(root, "version"));
		}
		assertThat(servers).containsExactly("webflux", "mvc");
	}

	/** Each dependency as {@code groupId:artifactId} or {@code groupId:artifactId:version}. */
	private static List<String> dependencies(Element dependencies) {
		List<String> found = new ArrayList<>();
		for (Node node = dependencies.getFirstChild(); node != null; node = node.getNextSibling()) {
			if (node instanceof Element dependency) {
				Element version = child(dependency, "version");
				found.add(text(dependency, "groupId") + ":" + text(dependency, "artifactId")
						+ ((version != null) ? ":" + version.getTextContent().strip() : ""));
			}
		}
		return found;
	}

}
