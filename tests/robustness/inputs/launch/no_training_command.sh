cd /tmp
bash ./run.sh --tp 2
