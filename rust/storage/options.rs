//! The options of a store client (credentials, endpoint, region, retries), kept so that
//! they never reach a message.

use std::collections::BTreeMap;
use std::fmt;

/// Options of the object store clients, as the `object_store` crate names them
/// (`aws_access_key_id`, `aws_endpoint`, `google_service_account`, `azure_storage_account_key`,
/// `allow_http`, `timeout`, ...), plus `max_retries` and `retry_timeout` (seconds) for the
/// retry policy. Values are never printed: `Debug` shows the keys only.
///
/// ```
/// use pqsift::storage::StorageOptions;
/// let options = StorageOptions::from_pairs([("aws_secret_access_key", "s3cr3t-value")]);
/// assert!(!format!("{options:?}").contains("s3cr3t"));
/// assert_eq!(options.redact("denied for s3cr3t-value"), "denied for ***");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct StorageOptions {
    values: BTreeMap<String, String>,
}

impl StorageOptions {
    /// Options from `(key, value)` pairs; keys are matched case-insensitively.
    pub fn from_pairs<K: AsRef<str>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Self { values: pairs.into_iter().map(|(k, v)| (k.as_ref().to_ascii_lowercase(), v.into())).collect() }
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// Every option, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// `text` with every option value that could be a secret replaced by `***`: values of
    /// four characters or more (shorter ones are flags and numbers, and would blank out
    /// unrelated text), longest first.
    pub fn redact(&self, text: &str) -> String {
        let mut secrets: Vec<&str> = self.values.values().map(String::as_str).filter(|v| v.len() >= 4).collect();
        secrets.sort_by_key(|v| std::cmp::Reverse(v.len()));
        let mut out = text.to_string();
        for secret in secrets {
            if out.contains(secret) {
                out = out.replace(secret, "***");
            }
        }
        out
    }
}

impl fmt::Debug for StorageOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.values.keys()).finish()
    }
}
