/**
 * UI-format workflows and ComfyUI images: conversion to the API format the job service runs (its public surface): the
 * conversion (uiToApi.ts), the workflow a PNG carries (image.ts), and a workflow input file as the CLI takes it
 * (input.ts).
 */
export * from './uiToApi';
export * from './image';
export * from './input';
