package io.servegate.gateway.api;

import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.core.TokenStreamLocation;
import tools.jackson.core.exc.StreamConstraintsException;
import tools.jackson.core.exc.UnexpectedEndOfInputException;

/**
 * Says what is wrong with a body that is not JSON, and where (line and column), in the client's
 * terms: the parser's own messages name its classes and features ({@code StreamReadConstraints},
 * {@code INCLUDE_SOURCE_IN_LOCATION}) and quote the body back.
 */
final class MalformedJson {

    private static final Pattern LIMIT = Pattern.compile("^(.*?) \\((\\d+)\\) exceeds the maximum allowed \\((\\d+)");
    private static final Pattern CONTROL = Pattern.compile("CTRL-CHAR, code (\\d+)");
    /** What the parser appends about where a construct started, or its configuration. */
    private static final Pattern PARSER_DETAIL = Pattern.compile("\\s*(\\(start marker at|at \\[Source|\\(bound as).*$");

    /** How every description starts. */
    static final String PREFIX = "malformed JSON";

    private MalformedJson() {
    }

    /** The cause for a 400: {@code malformed JSON at line L, column C: what}. */
    static String describe(JacksonException e) {
        TokenStreamLocation at = e.getLocation();
        String where = at == null || at.getLineNr() < 1 ? "" : " at line " + at.getLineNr() + ", column "
                + at.getColumnNr();
        return PREFIX + where + ": " + what(e);
    }

    private static String what(JacksonException e) {
        String message = e.getOriginalMessage() == null ? "" : e.getOriginalMessage();
        if (e instanceof UnexpectedEndOfInputException) {
            return "the body ends before the JSON value does (an object, array or string is not closed)";
        }
        if (e instanceof StreamConstraintsException) {
            return limit(message);
        }
        if (message.startsWith("Trailing token")) {
            return "there is more after the JSON value; send one object";
        }
        Matcher control = CONTROL.matcher(message);
        if (control.find()) {
            return "a string holds control character " + control.group(1) + "; write it escaped (\\u00XX)";
        }
        if (message.contains("Leading zeroes")) {
            return "a number has a leading zero";
        }
        String first = message.lines().findFirst().orElse("");
        String plain = PARSER_DETAIL.matcher(first).replaceAll("");
        return plain.isEmpty() || plain.contains("`") || plain.contains("Source") ? "not valid JSON"
                : Character.toLowerCase(plain.charAt(0)) + plain.substring(1);
    }

    private static String limit(String message) {
        Matcher m = LIMIT.matcher(message);
        if (!m.find()) {
            return "the body exceeds a limit of the JSON reader";
        }
        String subject = m.group(1);
        String max = m.group(3);
        return subject.startsWith("Number") ? "a number is longer than " + max + " characters"
                : subject.contains("nesting depth") ? "the JSON is nested deeper than " + max + " levels"
                : subject.startsWith("String") ? "a string is longer than " + max + " characters"
                : subject.startsWith("Name") ? "a field name is longer than " + max + " characters"
                : "the body is larger than " + max + " (" + subject.toLowerCase(java.util.Locale.ROOT) + ")";
    }
}
