//! [`Connect`]: where the blocking limiter gets its connections.

use std::time::Duration;

use redis::{ConnectionLike, RedisResult};

/// A source of blocking Redis connections: a [`redis::Client`] for one
/// server, a [`redis::cluster::ClusterClient`] for a Cluster.
pub trait Connect: Send + Sync + 'static {
    /// One connection.
    type Connection: ConnectionLike + Send + 'static;

    /// Opens a connection whose connect, read and write each give up after
    /// `timeout`.
    fn connect(&self, timeout: Duration) -> RedisResult<Self::Connection>;

    /// Makes reads and writes on `connection` give up after `timeout`.
    fn set_timeouts(connection: &Self::Connection, timeout: Duration) -> RedisResult<()>;
}

impl Connect for redis::Client {
    type Connection = redis::Connection;

    fn connect(&self, timeout: Duration) -> RedisResult<redis::Connection> {
        let connection = self.get_connection_with_timeout(timeout)?;
        Self::set_timeouts(&connection, timeout)?;
        Ok(connection)
    }

    fn set_timeouts(connection: &redis::Connection, timeout: Duration) -> RedisResult<()> {
        connection.set_read_timeout(Some(timeout))?;
        connection.set_write_timeout(Some(timeout))
    }
}

impl Connect for redis::cluster::ClusterClient {
    type Connection = redis::cluster::ClusterConnection;

    /// Connects to the Cluster; the connect timeout is the one the client was
    /// built with, reads and writes give up after `timeout`.
    fn connect(&self, timeout: Duration) -> RedisResult<redis::cluster::ClusterConnection> {
        let connection = self.get_connection()?;
        Self::set_timeouts(&connection, timeout)?;
        Ok(connection)
    }

    fn set_timeouts(
        connection: &redis::cluster::ClusterConnection,
        timeout: Duration,
    ) -> RedisResult<()> {
        connection.set_read_timeout(Some(timeout))?;
        connection.set_write_timeout(Some(timeout))
    }
}
