//! Object store clients, one per scheme, bucket and options (as DataFusion's
//! `ObjectStoreRegistry` keeps them), and the I/O runtime their requests run on.
//!
//! A client keeps its connection pool between scans: Spark reuses Python workers, and a
//! new TLS connection per scan would cost more than the requests. Clients and runtime are
//! process-wide, and rebuilt after a `fork` (a forked child has none of the runtime's
//! threads: PySpark forks its workers).
//!
//! Every HTTP attempt goes through [`CountingService`], which counts it into the calling
//! scan's [`StoreMetrics`]. Retries are the `object_store` crate's (exponential backoff with
//! jitter, on 5xx, 429, timeouts, connection errors and bodies cut short, the latter
//! resumed from where they stopped); `max_retries` (default 10) and `retry_timeout`
//! (seconds, default 180) bound them.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use http_body_util::BodyExt;
use object_store::client::{
    ClientOptions, HttpClient, HttpConnector, HttpError, HttpRequest, HttpResponse, HttpResponseBody, HttpService,
    ReqwestConnector,
};
use object_store::{ObjectStore, ObjectStoreScheme, RetryConfig};
use tokio::runtime::Runtime;
use url::Url;

use super::options::StorageOptions;
use super::store_metrics::StoreMetrics;

tokio::task_local! {
    /// The metrics of the scan whose request is running.
    static CURRENT: Arc<StoreMetrics>;
}

/// Process-wide clients and runtime, with the process they were built in.
struct State {
    pid: u32,
    runtime: Arc<Runtime>,
    stores: HashMap<(String, StorageOptions), Arc<dyn ObjectStore>>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// Runs `f` on the state of this process, building it first (or again, after a fork).
fn with_state<T>(f: impl FnOnce(&mut State) -> T) -> std::result::Result<T, String> {
    let mut guard = STATE.lock().unwrap_or_else(|p| p.into_inner());
    let pid = std::process::id();
    if guard.as_ref().is_some_and(|s| s.pid != pid) {
        // Inherited from the parent: its runtime's threads do not exist here. Dropping it
        // would wait for them, so it is leaked.
        std::mem::forget(guard.take());
    }
    if guard.is_none() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("pqsift-io")
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the I/O runtime: {e}"))?;
        *guard = Some(State { pid, runtime: Arc::new(runtime), stores: HashMap::new() });
    }
    Ok(f(guard.as_mut().expect("built above")))
}

/// Runs `future` to completion on the I/O runtime, its requests counted into `metrics`
/// and the time the calling thread waits added to them. Called from reading threads,
/// never from inside the runtime. Fails only when the runtime cannot be started.
pub(crate) fn block_on<F: Future>(metrics: &Arc<StoreMetrics>, future: F) -> std::result::Result<F::Output, String> {
    let runtime = with_state(|s| Arc::clone(&s.runtime))?;
    let started = Instant::now();
    let output = runtime.block_on(CURRENT.scope(Arc::clone(metrics), future));
    metrics.add_wait(started.elapsed());
    Ok(output)
}

/// The client for `url`'s store (scheme and bucket) with `options`, built on first use.
/// Errors are the builder's (an unknown option key, a malformed value), as text.
pub(crate) fn store_for(
    url: &Url,
    scheme: ObjectStoreScheme,
    options: &StorageOptions,
) -> std::result::Result<Arc<dyn ObjectStore>, String> {
    let root = url[..url::Position::BeforePath].to_string();
    let key = (root, options.clone());
    if let Some(store) = with_state(|s| s.stores.get(&key).cloned())? {
        return Ok(store);
    }
    let store = build_store(url, scheme, options)?;
    with_state(|s| Arc::clone(s.stores.entry(key).or_insert(store)))
}

fn build_store(
    url: &Url,
    scheme: ObjectStoreScheme,
    options: &StorageOptions,
) -> std::result::Result<Arc<dyn ObjectStore>, String> {
    let mut retry = RetryConfig::default();
    let mut store_options: Vec<(&str, &str)> = Vec::new();
    for (key, value) in options.iter() {
        match key {
            "max_retries" => retry.max_retries = max_retries(options)?,
            "retry_timeout" => {
                let seconds: f64 =
                    value.parse().map_err(|_| format!("option retry_timeout: {value:?} is not a number of seconds"))?;
                retry.retry_timeout =
                    Duration::try_from_secs_f64(seconds).map_err(|e| format!("option retry_timeout: {e}"))?;
            }
            _ => {
                // URLs, not flags such as `azure_use_fabric_endpoint`.
                let key_lower = key.to_ascii_lowercase();
                if key_lower.contains("endpoint") && !key_lower.contains("use_") {
                    check_endpoint(key, value)?;
                }
                store_options.push((key, value))
            }
        }
    }
    // The three builders share their methods but no trait: one body for each.
    macro_rules! build {
        ($builder:ty) => {{
            let mut builder = <$builder>::from_env().with_url(url.as_str());
            for (key, value) in store_options {
                let parsed = key.parse().map_err(|e| format!("unknown or invalid storage option {key:?} ({e})"))?;
                builder = builder.with_config(parsed, value);
            }
            Arc::new(
                builder.with_retry(retry).with_http_connector(CountingConnector).build().map_err(|e| e.to_string())?,
            )
        }};
    }
    let store: Arc<dyn ObjectStore> = match scheme {
        ObjectStoreScheme::AmazonS3 => build!(object_store::aws::AmazonS3Builder),
        ObjectStoreScheme::GoogleCloudStorage => build!(object_store::gcp::GoogleCloudStorageBuilder),
        ObjectStoreScheme::MicrosoftAzure => build!(object_store::azure::MicrosoftAzureBuilder),
        _ => return Err(format!("no object store for {url}")),
    };
    Ok(store)
}

/// An endpoint option's value must be an absolute `http(s)` URL the HTTP stack accepts:
/// the crate takes any text and, once signing a request for it, panics on one it cannot
/// make a request of (`ht!tp://x`). The value is not quoted: options are not shown.
fn check_endpoint(key: &str, value: &str) -> std::result::Result<(), String> {
    let valid = Url::parse(value).is_ok_and(|url| matches!(url.scheme(), "http" | "https") && url.host().is_some())
        && value.parse::<http::Uri>().is_ok();
    if valid { Ok(()) } else { Err(format!("storage option {key:?} is not an http:// or https:// URL")) }
}

/// The `max_retries` storage option: how many times a failed request is tried again (the
/// crate's default, 10, when unset).
pub(crate) fn max_retries(options: &StorageOptions) -> std::result::Result<usize, String> {
    match options.get("max_retries") {
        None => Ok(RetryConfig::default().max_retries),
        Some(value) => value.parse().map_err(|_| format!("option max_retries: {value:?} is not a count")),
    }
}

/// Builds the `object_store` crate's own HTTP client, wrapped in a [`CountingService`].
#[derive(Debug)]
struct CountingConnector;

impl HttpConnector for CountingConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(CountingService { inner }))
    }
}

/// Counts each HTTP attempt, its failures and the bytes of its body into the running
/// scan's metrics.
#[derive(Debug)]
struct CountingService {
    inner: HttpClient,
}

#[async_trait]
impl HttpService for CountingService {
    async fn call(&self, request: HttpRequest) -> Result<HttpResponse, HttpError> {
        let Ok(metrics) = CURRENT.try_with(Arc::clone) else {
            return self.inner.execute(request).await;
        };
        metrics.request_started();
        let response = self.inner.execute(request).await;
        metrics.request_finished();
        match response {
            Ok(response) => {
                let status = response.status();
                if status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408 {
                    metrics.attempt_failed();
                }
                let (parts, body) = response.into_parts();
                let (received, failed) = (Arc::clone(&metrics), Arc::clone(&metrics));
                let body = body
                    .map_frame(move |frame| {
                        if let Some(data) = frame.data_ref() {
                            received.add_bytes_received(data.len() as u64);
                        }
                        frame
                    })
                    .map_err(move |error| {
                        failed.attempt_failed();
                        error
                    });
                Ok(HttpResponse::from_parts(parts, HttpResponseBody::new(body)))
            }
            Err(error) => {
                metrics.attempt_failed();
                Err(error)
            }
        }
    }
}
