package io.windowlimiter.accuracy;

import java.util.List;
import java.util.Locale;

/**
 * A plain SVG document built as text: lines, rectangles, circles and text in pixel coordinates.
 * The pictures need nothing more, and text stays diffable in git.
 */
public final class Svg {

	private final int width;

	private final int height;

	private final StringBuilder body = new StringBuilder();

	public Svg(int width, int height) {
		this.width = width;
		this.height = height;
		rect(0, 0, width, height, "#ffffff", null);
	}

	public Svg line(double x1, double y1, double x2, double y2, String stroke, double strokeWidth, String dash) {
		this.body.append(String.format(Locale.ROOT,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"%.1f\"%s/>%n", x1, y1,
				x2, y2, stroke, strokeWidth, dash(dash)));
		return this;
	}

	/** A line through the points, each {x, y}. */
	public Svg polyline(List<double[]> points, String stroke, double strokeWidth, String dash) {
		StringBuilder coordinates = new StringBuilder();
		for (double[] point : points) {
			coordinates.append(String.format(Locale.ROOT, "%.1f,%.1f ", point[0], point[1]));
		}
		this.body.append(String.format(Locale.ROOT,
				"<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\" stroke-linejoin=\"round\"%s/>%n",
				coordinates.toString().trim(), stroke, strokeWidth, dash(dash)));
		return this;
	}

	public Svg rect(double x, double y, double width, double height, String fill, String stroke) {
		this.body.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"%s/>%n",
				x, y, width, height, fill, (stroke != null) ? " stroke=\"" + stroke + "\"" : ""));
		return this;
	}

	public Svg circle(double x, double y, double radius, String fill) {
		this.body.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>%n", x, y,
				radius, fill));
		return this;
	}

	/** Text; {@code anchor} is start, middle or end. */
	public Svg text(double x, double y, String text, double size, String anchor, String fill, boolean bold) {
		this.body.append(String.format(Locale.ROOT,
				"<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"%s\" fill=\"%s\"%s>%s</text>%n", x, y, size,
				anchor, fill, bold ? " font-weight=\"bold\"" : "", escape(text)));
		return this;
	}

	/** Text turned to read upwards, centred on (x, y): for y-axis titles. */
	public Svg verticalText(double x, double y, String text, double size, String fill) {
		this.body.append(String.format(Locale.ROOT,
				"<text x=\"%.1f\" y=\"%.1f\" font-size=\"%.1f\" text-anchor=\"middle\" fill=\"%s\" "
						+ "transform=\"rotate(-90 %.1f %.1f)\">%s</text>%n",
				x, y, size, fill, x, y, escape(text)));
		return this;
	}

	@Override
	public String toString() {
		return String.format(Locale.ROOT,
				"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
						+ "font-family=\"Helvetica, Arial, sans-serif\">%n%s</svg>%n",
				this.width, this.height, this.width, this.height, this.body);
	}

	private static String dash(String dash) {
		return (dash != null) ? " stroke-dasharray=\"" + dash + "\"" : "";
	}

	private static String escape(String text) {
		return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
	}

}
