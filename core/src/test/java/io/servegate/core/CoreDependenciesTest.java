package io.servegate.core;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The core is plain Java, so that the gateway, the simulator and the JMH benchmarks drive the
 * same classes: no web framework, reactive runtime, transport or Redis client may leak in.
 */
class CoreDependenciesTest {

    private static final JavaClasses CORE = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.servegate.core");

    @Test
    void coreUsesNoFrameworkReactorNettyGrpcOrLettuce() {
        noClasses().should().dependOnClassesThat().resideInAnyPackage(
                        "org.springframework..", "reactor..", "io.netty..", "io.grpc..", "io.lettuce..",
                        "io.servegate.gateway..", "io.servegate.sdk..", "io.servegate.oip..")
                .because("the core is driven unchanged by the gateway, the simulator and the benchmarks")
                .check(CORE);
    }

    @Test
    void coreIsNotEmpty() {
        // an empty import would make the rule above pass vacuously
        org.assertj.core.api.Assertions.assertThat(CORE.size()).isGreaterThan(10);
    }
}
