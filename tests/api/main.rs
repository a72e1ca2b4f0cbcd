//! The integration test binary: one module per feature, shared helpers in `helpers`.

mod agent;
mod binary;
mod chat;
mod chat_ui;
mod chat_views;
mod components;
mod demo_items;
mod health;
mod helpers;
mod home;
mod llm;
mod login;
mod notify;
mod pages;
mod runs;
mod store;
mod workflow;
