# `perfgate serve` in a container: the release tarball (ci/release.sh) on
# debian:12-slim, run as a non-root user, the database on a volume, a health
# check on /healthz. .github/workflows/release.yml builds it from dist/ and
# pushes ghcr.io/OWNER/perfgate:VERSION; by hand:
#   bash ci/release.sh dist
#   docker build --build-arg TARBALL=perfgate-0.1.0-linux-x86_64.tar.gz -t perfgate -f Dockerfile dist
#   docker run -d -p 8080:8080 -v perfgate-db:/var/lib/perfgate perfgate
#   docker exec <container> perfgate token create --db /var/lib/perfgate/perfgate.db --project demo
# Put TLS in front of it (docs/deployment.md: the nginx configuration).
FROM debian:12-slim
ARG TARBALL
# ADD unpacks a local .tar.gz.
ADD ${TARBALL} /opt/
RUN ln -s /opt/perfgate-*/bin/perfgate /usr/local/bin/perfgate \
 && ln -s /opt/perfgate-*/bin/perfgate-exec /usr/local/bin/perfgate-exec \
 && useradd --system --uid 10001 --home-dir /var/lib/perfgate --shell /usr/sbin/nologin perfgate \
 && install -d -o perfgate -g perfgate -m 0750 /var/lib/perfgate
USER perfgate
VOLUME /var/lib/perfgate
EXPOSE 8080
# bash's /dev/tcp: the slim image has no HTTP client.
HEALTHCHECK --interval=30s --timeout=5s \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8080 && printf 'GET /healthz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"]
ENTRYPOINT ["perfgate"]
CMD ["serve", "--db", "/var/lib/perfgate/perfgate.db", "--listen", "0.0.0.0:8080"]
