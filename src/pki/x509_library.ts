/** @peculiar/x509 with the reflect-metadata polyfill its dependency injection needs, first. */
import "reflect-metadata";
export * from "@peculiar/x509";
