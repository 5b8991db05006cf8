package io.servegate.gateway.api;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.regex.Pattern;

/**
 * A container address as the admin API accepts it: {@code host:port} and nothing else, a DNS name
 * (labels of letters, digits and inner hyphens), an IPv4 address or a bracketed IPv6 literal, and
 * an ASCII port in 1..65535. No scheme, path, user info or query, so an address can only ever name
 * a socket for the gateway's gRPC client; it is never resolved here.
 */
final class ContainerAddress {

    private static final Pattern HOST = Pattern.compile(
            "(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*");
    private static final Pattern PORT = Pattern.compile("[0-9]{1,5}");
    private static final Pattern IPV6_CHARS = Pattern.compile("[0-9A-Fa-f:.]{2,45}");

    private ContainerAddress() {
    }

    /**
     * @return {@code address}, when it is {@code host:port}
     * @throws ApiException 400 naming what is wrong with it
     */
    static String validate(String address) {
        if (address.length() > 261) {
            throw ApiException.badRequest("container address is " + address.length()
                    + " characters long; host:port is at most 261");
        }
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw ApiException.badRequest("container address " + quote(address) + " must be host:port");
        }
        String host = address.substring(0, colon);
        String portText = address.substring(colon + 1);
        if (!PORT.matcher(portText).matches()) {
            throw ApiException.badRequest("container address " + quote(address) + " has no numeric port");
        }
        int port = Integer.parseInt(portText);
        if (port < 1 || port > 65535) {
            throw ApiException.badRequest("container port must be in 1..65535, got " + port);
        }
        boolean valid = host.startsWith("[") ? host.endsWith("]") && ipv6(host.substring(1, host.length() - 1))
                : HOST.matcher(host).matches();
        if (!valid) {
            throw ApiException.badRequest("container host " + quote(host)
                    + " is not a valid host name, IPv4 address or [IPv6] address");
        }
        return address;
    }

    private static boolean ipv6(String literal) {
        if (!IPV6_CHARS.matcher(literal).matches()) {
            return false;
        }
        try {
            // a literal with ':' is parsed, never looked up
            return InetAddress.getByName("[" + literal + "]") instanceof Inet6Address;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** Quotes user text for a message, escaping anything outside printable ASCII and cutting it short. */
    private static String quote(String s) {
        StringBuilder sb = new StringBuilder("'");
        for (int i = 0; i < Math.min(s.length(), 80); i++) {
            char c = s.charAt(i);
            sb.append(c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return sb.append(s.length() > 80 ? "...'" : "'").toString();
    }
}
