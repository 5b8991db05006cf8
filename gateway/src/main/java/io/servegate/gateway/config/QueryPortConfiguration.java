package io.servegate.gateway.config;

import io.servegate.gateway.api.JsonErrorWebExceptionHandler;
import io.servegate.gateway.api.QueryRoutesFirst;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.HttpHandlerDecoratorFactory;
import org.springframework.web.reactive.function.server.HandlerStrategies;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/** How requests on the query port reach its routes: queries directly, the rest through Spring's chain. */
@Configuration(proxyBeanMethods = false)
public class QueryPortConfiguration {

    /** Queries straight to the query routes, the rest of the port through Spring's chain ({@link QueryRoutesFirst}). */
    @Bean
    HttpHandlerDecoratorFactory queryRoutesFirst(RouterFunction<ServerResponse> queryRoutes,
            ServerCodecConfigurer codecs, JsonErrorWebExceptionHandler jsonErrors) {
        HandlerStrategies strategies = HandlerStrategies.builder()
                .codecs(c -> {
                    // the port's own readers and writers, with their body limit
                    c.registerDefaults(false);
                    codecs.getReaders().forEach(c.customCodecs()::register);
                    codecs.getWriters().forEach(c.customCodecs()::register);
                })
                .exceptionHandler(jsonErrors) // the port's one, as Spring's chain uses it
                .build();
        HttpHandler queries = RouterFunctions.toHttpHandler(queryRoutes, strategies);
        return spring -> new QueryRoutesFirst(queries, spring);
    }
}
