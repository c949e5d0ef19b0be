/** UI-format workflows and ComfyUI images: conversion to the API format the job service runs. */
export * from './uiToApi';
export * from './image';
