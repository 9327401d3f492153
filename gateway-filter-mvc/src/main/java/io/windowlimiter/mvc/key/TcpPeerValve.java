package io.windowlimiter.mvc.key;

import java.io.IOException;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;

import io.windowlimiter.core.key.ClientIpKeys;
import jakarta.servlet.ServletException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;

import org.springframework.boot.tomcat.ConfigurableTomcatWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.core.Ordered;

/**
 * Hands {@link ClientIpMvcKeyResolver} what arrived on the request's TCP connection: the address of its other
 * end ({@link ClientIpMvcKeyResolver#PEER_ATTRIBUTE}) and the X-Forwarded-For entries as sent
 * ({@link ClientIpMvcKeyResolver#FORWARDED_FOR_ATTRIBUTE}). Tomcat's RemoteIpValve, which Spring Boot adds when
 * forwarded headers are on (by itself on Kubernetes and other detected platforms), replaces the servlet
 * request's remote address by what X-Forwarded-For says whenever the peer is in its internal proxies
 * (loopback and private ranges by default), and takes the entries it read out of the header; Spring's
 * forwarded-header filter hides the header. The servlet API has no other way to the peer: Tomcat's own
 * request keeps it apart ({@link Request#getPeerAddr()}), and only a valve sees that request. So this valve
 * runs first, before any other engine valve.
 */
public class TcpPeerValve extends ValveBase {

	public TcpPeerValve() {
		// async requests pass through it: a valve that does not say so makes Tomcat refuse them
		super(true);
	}

	@Override
	public void invoke(Request request, Response response) throws IOException, ServletException {
		request.setAttribute(ClientIpMvcKeyResolver.PEER_ATTRIBUTE, request.getPeerAddr());
		Enumeration<String> forwardedFor = request.getHeaders(ClientIpKeys.X_FORWARDED_FOR);
		if (forwardedFor.hasMoreElements()) {
			List<String> sent = Collections.list(forwardedFor);
			request.setAttribute(ClientIpMvcKeyResolver.FORWARDED_FOR_ATTRIBUTE, sent);
		}
		getNext().invoke(request, response);
	}

	/**
	 * Adds the valve to Tomcat's engine ahead of the valves Spring Boot's own customizer adds (RemoteIpValve
	 * among them): customizers run in order, and each appends its valves.
	 */
	public static class Customizer implements WebServerFactoryCustomizer<ConfigurableTomcatWebServerFactory>, Ordered {

		@Override
		public void customize(ConfigurableTomcatWebServerFactory factory) {
			factory.addEngineValves(new TcpPeerValve());
		}

		@Override
		public int getOrder() {
			return Ordered.HIGHEST_PRECEDENCE;
		}

	}

}
